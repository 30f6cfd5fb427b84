"""tb-graph-plugin: Graph Explorer, a TensorBoard plugin for ML computation graphs."""
