"""How deep a JSON or protobuf text document nests, measured before it is parsed.

Python's JSON decoder and protobuf's text parser (``text_format``, pure Python whatever the
protobuf backend) recurse once per nesting level: a document nested a few thousand levels deep
(``[[[[...]]]]``, ``a { a { a { ... } } }``) ends in ``RecursionError`` deep inside the parser,
which no caller expects. ``json_depth`` and ``pbtxt_depth`` count the brackets outside string
literals (and, in pbtxt, comments) without recursing, in a few passes of C code (``re``,
``itertools``), so that a caller refuses such a document with a message before parsing it.

The limits: ``MAX_PBTXT_DEPTH`` is protobuf's own limit for binary messages (upb's default
decode depth): a deeper GraphDef could not be serialised and parsed again by a worker anyway;
GraphDefs nest about 10 levels (``library { function { node_def { attr { value { func ...``).
``MAX_JSON_DEPTH`` holds any Keras ``model.to_json()`` (a nested model adds 4 levels) and is
far beyond the 1 level of the routes' JSON array parameters.

Post-condition: the depth is exact for well-formed documents (the nesting the parser will see);
for malformed ones it is the depth of the brackets found outside what look like strings and
comments, and the parser then refuses them anyway.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["MAX_JSON_DEPTH", "MAX_PBTXT_DEPTH", "json_depth", "pbtxt_depth"]

MAX_JSON_DEPTH = 100
MAX_PBTXT_DEPTH = 100

# What the parsers skip: JSON strings; pbtxt strings (either quote, one line) and ``#`` comments.
# One left-to-right alternation, so a quote in a comment or a ``#`` in a string is read as the
# tokenizer reads it.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_PBTXT_SKIPPED = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'[^\'\\\n]*(?:\\.[^\'\\\n]*)*\'|#[^\n]*')
_NOT_JSON_BRACKET = re.compile(r"[^\[\]{}]+")
_NOT_PBTXT_BRACKET = re.compile(r"[^{}<>]+")
_STEP = {"[": 1, "{": 1, "<": 1, "]": -1, "}": -1, ">": -1}


def _deepest(brackets: str) -> int:
    """The deepest running count of opening minus closing brackets (0 for none)."""
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def json_depth(text: str) -> int:
    """How deep ``text`` nests arrays and objects: ``"a"`` 0, ``["a"]`` 1, ``[{"a": []}]`` 3.

    >>> json_depth('["a[[[", {"b": []}]')
    3
    """
    return _deepest(_NOT_JSON_BRACKET.sub("", _JSON_STRING.sub("", text)))


def pbtxt_depth(text: str) -> int:
    """How deep ``text`` (protobuf text format) nests messages, ``{}`` or ``<>``.

    >>> pbtxt_depth('node { name: "a{{" attr < key: "k" > }  # }}}}')
    2
    """
    return _deepest(_NOT_PBTXT_BRACKET.sub("", _PBTXT_SKIPPED.sub("", text)))
