"""The TensorBoard plugin: ``graph_explorer``, loaded through the ``tensorboard_plugins`` entry point."""

from __future__ import annotations

from tensorboard.plugins import base_plugin

from tb_graph_plugin import metadata
from tb_graph_plugin.api import budget, prefault
from tb_graph_plugin.api.routes import Routes
from tb_graph_plugin.api.warmup import Warmup
from tb_graph_plugin.api.workers import DEFAULT_JOB_TIMEOUT_S, DEFAULT_WORKERS, WorkerPool
from tb_graph_plugin.ingest.store import DEFAULT_CACHE_BYTES, DEFAULT_MAX_OPS, DEFAULT_UPLOAD_LIMIT_BYTES, GraphStore

__all__ = ["GraphExplorerPlugin", "GraphExplorerLoader"]


class GraphExplorerPlugin(base_plugin.TBPlugin):
    plugin_name = metadata.PLUGIN_NAME

    def __init__(
        self,
        context,
        upload_limit_bytes=DEFAULT_UPLOAD_LIMIT_BYTES,
        cache_bytes=DEFAULT_CACHE_BYTES,
        workers=DEFAULT_WORKERS,
        job_timeout_s=DEFAULT_JOB_TIMEOUT_S,
        max_ops=DEFAULT_MAX_OPS,
        warmup=True,
    ):
        self._provider = context.data_provider
        # One memory budget for TensorBoard and the workers (see api/budget.py).
        self.budget = budget.split(cache_bytes, workers)
        self._store = GraphStore(self._provider, self.budget.store_bytes, upload_limit_bytes, max_ops,
                                 max_upload_bytes=self.budget.upload_bytes)
        # Worker processes start once the logdir has a graph to show (``warmup``: with the flag off
        # too, nothing built), when a page lists the plugins (frontend_metadata), or on the first
        # graph request, whichever comes first.
        self.pool = WorkerPool(n_workers=workers, job_timeout_s=job_timeout_s,
                               result_cache_bytes=self.budget.result_cache_bytes,
                               worker_graph_bytes=self.budget.worker_graph_bytes,
                               prefault_bytes=min(prefault.PREFAULT_BYTES, self.budget.worker_graph_bytes // 2),
                               read_heap_bytes=prefault.READ_HEAP_BYTES)
        self._routes = Routes(self._store, self._provider, self.pool)
        # Builds the graph the UI opens first before it asks: in the background from the start
        # (the flag; off: only the workers are started then), and in any case as soon as the tab's
        # page asks for its module.
        self.warmup = Warmup(self._routes, self._provider, build=warmup, pool=self.pool).start()
        self._routes.on_tab_opened = self.warmup.tab_opened

    def get_plugin_apps(self):
        return self._routes.table()

    def is_active(self):
        # TensorBoard core activates the tab when data_plugin_names() have data.
        return False

    def data_plugin_names(self):
        return metadata.DATA_PLUGIN_NAMES

    def frontend_metadata(self):
        # Asked on every page load (/data/plugins_listing), before the user can open the tab:
        # the moment to start the worker processes (non-blocking; once).
        self.pool.prestart()
        return base_plugin.FrontendMetadata(
            es_module_path="/index.js",
            tab_name=metadata.TAB_NAME,
            disable_reload=True,
        )


class GraphExplorerLoader(base_plugin.TBLoader):
    """Defines our flags and builds the plugin from TensorBoard's context."""

    def define_flags(self, parser):
        group = parser.add_argument_group("graph_explorer")
        group.add_argument(
            "--graph_explorer_upload_limit_mb",
            type=int,
            default=DEFAULT_UPLOAD_LIMIT_BYTES >> 20,
            help="Graph Explorer: largest graph file accepted by upload, in MiB (default %(default)s).",
        )
        group.add_argument(
            "--graph_explorer_cache_mb",
            type=int,
            default=DEFAULT_CACHE_BYTES >> 20,
            help="Graph Explorer: memory budget, in MiB, of the graphs and answers kept by TensorBoard and "
            "its graph workers together (default %(default)s; see BENCHMARKS.md for the overhead beyond it).",
        )

        group.add_argument(
            "--graph_explorer_workers",
            type=int,
            default=DEFAULT_WORKERS,
            help="Graph Explorer: worker processes that build hierarchies and layouts (default %(default)s).",
        )
        group.add_argument(
            "--graph_explorer_job_timeout_s",
            type=float,
            default=DEFAULT_JOB_TIMEOUT_S,
            help="Graph Explorer: a layout job running longer is stopped with an error (default %(default)s).",
        )
        group.add_argument(
            "--graph_explorer_max_ops",
            type=int,
            default=DEFAULT_MAX_OPS,
            help="Graph Explorer: graphs with more ops are refused with their op count (default %(default)s).",
        )
        group.add_argument(
            "--graph_explorer_warmup",
            type=lambda v: v.lower() in ("1", "true", "yes", "on"),
            default=True,
            help="Graph Explorer: build the graph the tab opens first in the background (default %(default)s; "
                 "off: only the worker processes start once there is a graph to show).",
        )

    def fix_flags(self, flags):
        if getattr(flags, "graph_explorer_upload_limit_mb", 1) <= 0:
            raise ValueError("--graph_explorer_upload_limit_mb must be positive")
        if getattr(flags, "graph_explorer_cache_mb", 1) <= 0:
            raise ValueError("--graph_explorer_cache_mb must be positive")
        if getattr(flags, "graph_explorer_workers", 1) <= 0:
            raise ValueError("--graph_explorer_workers must be positive")
        if getattr(flags, "graph_explorer_max_ops", 1) <= 0:
            raise ValueError("--graph_explorer_max_ops must be positive")

    def load(self, context):
        flags = context.flags
        upload_mb = getattr(flags, "graph_explorer_upload_limit_mb", None) or (DEFAULT_UPLOAD_LIMIT_BYTES >> 20)
        cache_mb = getattr(flags, "graph_explorer_cache_mb", None) or (DEFAULT_CACHE_BYTES >> 20)
        return GraphExplorerPlugin(
            context,
            upload_limit_bytes=upload_mb << 20,
            cache_bytes=cache_mb << 20,
            workers=getattr(flags, "graph_explorer_workers", None) or DEFAULT_WORKERS,
            job_timeout_s=getattr(flags, "graph_explorer_job_timeout_s", None) or DEFAULT_JOB_TIMEOUT_S,
            max_ops=getattr(flags, "graph_explorer_max_ops", None) or DEFAULT_MAX_OPS,
            warmup=getattr(flags, "graph_explorer_warmup", True),
        )
