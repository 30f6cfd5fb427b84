"""Write tb_graph_plugin/static/export-font.woff: the font embedded in exported SVG/PNG views.

DejaVu Sans Condensed (Bitstream Vera licence, DejaVu changes public domain: see
export-font-LICENSE.txt), subset to Latin-1 and the symbols the scene draws (x, middle dot,
ellipsis, minus, arrows, dashes); its advance widths are within 2% of Arial's, which the
layout's text measure assumes. A developer tool (fontTools), not a runtime dependency:

    pip install fonttools && python frontend/fonts/make_export_font.py [/path/to/DejaVuSansCondensed.ttf]
"""

import shutil
import sys
from pathlib import Path

from fontTools import subset

SOURCE = "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf"  # Debian: fonts-dejavu-core
LICENSE = "/usr/share/doc/fonts-dejavu-core/copyright"
STATIC = Path(__file__).resolve().parents[2] / "tb_graph_plugin" / "static"
UNICODES = "U+0020-007E,U+00A0-00FF,U+2013-2014,U+2022,U+2026,U+2190-2193,U+2212"


def main(source: str = SOURCE) -> None:
    out = STATIC / "export-font.woff"
    subset.main([source, f"--unicodes={UNICODES}", "--flavor=woff", "--no-hinting",
                 "--layout-features=kern,liga", f"--output-file={out}"])
    shutil.copyfile(LICENSE, STATIC / "export-font-LICENSE.txt")
    print(out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main(*sys.argv[1:])
