"""tb-graph-plugin: a TensorBoard plugin that shows ML computation graphs (tab "Graph Explorer")."""

import setuptools

setuptools.setup(
    name="tb-graph-plugin",
    version="0.1.0",
    description="Graph Explorer: a fast TensorBoard graph dashboard with server-side layout",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=setuptools.find_packages(include=["tb_graph_plugin", "tb_graph_plugin.*"]),
    package_data={"tb_graph_plugin": ["static/*", "http_api.md"]},
    python_requires=">=3.9",
    install_requires=[
        "tensorboard>=2.14",
        "protobuf>=3.20",
        "werkzeug>=1.0",
        "numpy>=1.21",
        "pygraphviz>=1.11",  # bundles Graphviz; the per-group layout engine (issue 4)
        "scipy>=1.12",  # the fast layered layout: LP layering (HiGHS), isotonic regression, components
        "google-re2>=1.1",  # /search in linear time (issue 15): no catastrophic backtracking
        # TFRecord checksums of uploaded event files in C (~10 ms per 100 MB; numpy took 2.2 s,
        # TensorBoard's pure-Python CRC ~20 s); tests/ingest/test_crc32c.py checks the C extension.
        "google-crc32c>=1.5",
        # HiGHS for the optimal layering LP (layout/fast/rank.py), the solver scipy bundles, but
        # through its own public package instead of scipy's private bindings.
        "highspy>=1.16",  # the version tested (rank.py uses its exported C++ class _Highs)
    ],
    extras_require={
        # tb_graph_plugin.torch.add_graph (torch.export front end); the server reads .pt2 without it
        "torch": ["torch>=2.6"],
        # tb_graph_plugin.jax.add_graph (jaxpr front end; tested with jax 0.10.2, flax 0.12.8);
        # the server reads .mlir (StableHLO text) without it
        "jax": ["jax>=0.4.30"],
        "test": [
            "pytest>=7",
            "hypothesis>=6",
            "playwright>=1.40",
            "tensorflow-cpu>=2.15",
            # The CPU build of this exact version lies on disk on our machines; any other
            # spec pulls gigabytes of CUDA packages.
            "torch==2.13.0",
            # Hugging Face models built from a config (random init) for the hierarchy tests.
            "transformers>=4.40",
            # Hugging Face diffusers models (UNet, VAE, ...) built from tiny configs in the tests.
            "diffusers>=0.30",
            # The JAX front end: JAX (CPU: jax brings jaxlib's CPU build), Flax models, Optax steps.
            "jax>=0.4.30",
            "flax>=0.10",
            "optax>=0.2",
            # torch.onnx.export's default (torch.export-based) exporter needs onnxscript, which
            # brings onnx: the tests write .onnx files with them (tests/onnx_files.py). The plugin
            # reads .onnx with protobuf alone and needs neither.
            "onnx>=1.17",
            "onnxscript>=0.5",
            # The HTTP API: its OpenAPI description checked, every route fuzzed against it.
            "openapi-spec-validator>=0.7",
            "schemathesis>=4.0",
            # The first-view browser test reads its screencast frames (tests/ui/test_first_view_fits.py).
            "pillow>=9",
        ],
    },
    entry_points={
        "tensorboard_plugins": [
            "graph_explorer = tb_graph_plugin.plugin:GraphExplorerLoader",
        ],
        "console_scripts": [
            "tb-graph = tb_graph_plugin.cli:main",
        ],
    },
)
