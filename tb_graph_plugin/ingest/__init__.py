"""Ingest: data provider blobs (or local files) -> GraphDef, cached.

The stage, in order (see ``store.GraphStore`` for which data names feed which kind):

1. ``listing``: what graph data exists (the stock ``/info`` flags, plus every kept step);
2. ``blobs.read_blob``: the bytes of one (run, tag, step) through ``context.data_provider``;
3. parse: ``parse.parse_graph_def`` (run graph), ``run_metadata.merge_function_graphs``
   (trace_export), ``keras_model.keras_json_to_graph_def`` (conceptual), ``parse.read_graph_file``
   (uploads, local files: GraphDef, a ``.pt2`` through ``pt2`` and ``exported_program``, an ONNX
   model through ``onnx_model``, ``onnx_proto``, ``onnx_scopes`` and ``onnx_attrs``, JAX's
   StableHLO text through ``stablehlo``, ``mlir_text``, ``mlir_locations``, ``jax_program`` and
   ``jax_scopes``);
4. ``store.GraphStore``: caches the parsed result per (experiment, run, tag, kind, step);
5. ``attrs.limit_attr_size``: the stock ``/graph`` attribute elision, on a copy.

Import the modules themselves (``from tb_graph_plugin.ingest.store import GraphStore``): this
package imports none of them, so a worker process that needs only ``parse`` and
``run_metadata`` does not pay for the rest (event files, Keras models, the data provider).
"""
