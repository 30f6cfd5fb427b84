"""A real TensorBoard WSGI app over a logdir, with our plugin and the stock Graphs plugin beside it."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tensorboard.backend import application
from tensorboard.backend.event_processing import data_provider as tb_data_provider
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.plugins import base_plugin
from tensorboard.plugins.graph import graphs_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_graph_plugin import plugin as our_plugin

OURS = "/data/plugin/graph_explorer"
STOCK = "/data/plugin/graphs"


class TbApp:
    """``client`` over ``TensorBoardWSGI`` serving both plugins from the Python multiplexer."""

    def __init__(self, logdir, upload_limit_mb=256, max_ops=None, warmup=False, workers=None, cache_mb=512,
                 samples_per_plugin=None):
        # ``samples_per_plugin``: as TensorBoard's flag (0 = all), e.g. {"graph_explorer_node_data": 0}
        multiplexer = plugin_event_multiplexer.EventMultiplexer(
            tensor_size_guidance={"graphs": 0, **(samples_per_plugin or {})}
        )
        multiplexer.AddRunsFromDirectory(str(logdir))
        multiplexer.Reload()
        self.provider = tb_data_provider.MultiplexerDataProvider(multiplexer, str(logdir))
        flags = SimpleNamespace(
            graph_explorer_upload_limit_mb=upload_limit_mb, graph_explorer_cache_mb=cache_mb,
            graph_explorer_max_ops=max_ops, graph_explorer_warmup=warmup, graph_explorer_workers=workers,
        )
        context = base_plugin.TBContext(
            logdir=str(logdir), data_provider=self.provider, flags=flags
        )
        self.ours = our_plugin.GraphExplorerLoader().load(context)
        self.stock = graphs_plugin.GraphsPlugin(context)
        app = application.TensorBoardWSGI([self.ours, self.stock], data_provider=self.provider)
        self.client = werkzeug_test.Client(app, wrappers.Response)

    def get(self, path, **params):
        return self.client.get(path, query_string=params)

    def post(self, path, data, **params):
        return self.client.post(path, data=data, query_string=params)

    def json(self, path, **params):
        response = self.get(path, **params)
        assert response.status_code == 200, (path, params, response.status_code, response.get_data(as_text=True))
        return json.loads(response.get_data())


def json_error(response, status: int) -> str:
    """The message of a JSON error answer of our plugin, after checking its status and form
    (``{"error", "version"}``, the shape TensorBoard's own error answers have)."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    assert response.headers["Content-Type"].startswith("application/json")
    body = json.loads(response.get_data())
    assert set(body) == {"error", "version"}
    return body["error"]
