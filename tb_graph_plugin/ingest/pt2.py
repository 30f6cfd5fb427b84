"""A ``.pt2`` archive (``torch.export.save``) -> GraphDef, without torch.

The archive is a zip; its program is the JSON ``<archive>/models/<name>.json`` (torch 2.6 and
later; older archives: ``serialized_exported_program.json``), converted by
``exported_program.to_graph_def``. Weights, constants and sample inputs are never read, and
the program's output types are never rebuilt (``torch.export.load`` needs every output type
registered with pytree: a Hugging Face model's ``.pt2`` fails to load without
``transformers``; here its output fields are names, nothing more).

Pre: ``blob`` is the file's bytes. Post: a GraphDef, or ``InvalidArgumentError`` saying what is
wrong (not a zip, no program, program JSON over ``MAX_PROGRAM_BYTES``, malformed JSON).
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.ingest import exported_program

__all__ = ["looks_like_pt2", "read_pt2", "read_program", "pt2_to_graph_def", "MAX_PROGRAM_BYTES"]

MAX_PROGRAM_BYTES = 1 << 30  # the program JSON, uncompressed (a zip bomb stops here)


def looks_like_pt2(blob, filename: Optional[str] = None) -> bool:
    """A zip archive (local file header magic); ``pt2_to_graph_def`` tells the rest."""
    return bytes(blob[:4]) == b"PK\x03\x04"


def read_pt2(blob, what: str, max_ops: Optional[int] = None) -> tuple[graph_pb2.GraphDef, str]:
    """``(GraphDef, source)``, the ``parse.GRAPH_FILE_FORMATS`` reader (the caller checks the op
    limit on the GraphDef: the program JSON is bounded by ``MAX_PROGRAM_BYTES``)."""
    return pt2_to_graph_def(bytes(blob), what), "torch.export program (.pt2)"


def read_program(blob: bytes, what: str) -> dict:
    """The decoded program JSON of a ``.pt2`` archive (``models/model.json`` first)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise errors.InvalidArgumentError(f"{what} is not a readable .pt2 (zip) archive: {e}") from None
    programs = [i for i in infos if _is_program(i.filename)]
    if not programs:
        raise errors.InvalidArgumentError(
            f"{what} is a zip archive without a torch.export program (no models/*.json): "
            "write it with torch.export.save")
    info = min(programs, key=lambda i: (not i.filename.endswith("models/model.json"), i.filename))
    if info.file_size > MAX_PROGRAM_BYTES:
        raise errors.InvalidArgumentError(
            f"{what}: the program {info.filename} is {info.file_size} bytes, over {MAX_PROGRAM_BYTES}")
    try:
        with archive.open(info) as f:
            data = f.read(MAX_PROGRAM_BYTES + 1)
        return json.loads(data)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RecursionError, NotImplementedError) as e:
        raise errors.InvalidArgumentError(f"{what}: {info.filename} cannot be read: {str(e)[:200]}") from None


def pt2_to_graph_def(blob: bytes, what: str) -> graph_pb2.GraphDef:
    graph = exported_program.exported_program_to_graph_def(read_program(blob, what), what)
    if not graph.node:
        raise errors.InvalidArgumentError(f"{what}: the torch.export program holds no nodes")
    return graph


def _is_program(filename: str) -> bool:
    parts = filename.split("/")
    return (len(parts) >= 2 and parts[-2] == "models" and parts[-1].endswith(".json")) or \
        parts[-1] == "serialized_exported_program.json"
