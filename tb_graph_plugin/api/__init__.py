"""API: the HTTP routes (``routes``) over the earlier stages, answering in ``tb_graph_plugin.wire``."""
