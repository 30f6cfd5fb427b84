// Plane geometry the drawings share: edge polylines (smoothed through their bends, or thinned
// when zoomed out), arrow heads, rounded boxes, where an edge's label may go.
/** Appends an edge's polyline (smoothed through its bend points when `smooth`) to a path. */
export function edgePath(path: Path2D, pts: number[][], smooth: boolean, minStep = 0): void {
  path.moveTo(pts[0][0], pts[0][1]);
  if (smooth && pts.length > 2) {
    for (let i = 1; i < pts.length - 1; i++) {
      const [x1, y1] = pts[i];
      const [x2, y2] = pts[i + 1];
      const last = i + 1 === pts.length - 1;
      path.quadraticCurveTo(x1, y1, last ? x2 : (x1 + x2) / 2, last ? y2 : (y1 + y2) / 2);
    }
  } else {
    // zoomed out: drop bends closer than `minStep` (world units ~ 1.5 screen px) to the last kept one
    let [lx, ly] = pts[0];
    const last = pts.length - 1;
    for (let i = 1; i < last; i++) {
      const [x, y] = pts[i];
      if (Math.abs(x - lx) + Math.abs(y - ly) < minStep) continue;
      path.lineTo(x, y);
      lx = x;
      ly = y;
    }
    path.lineTo(pts[last][0], pts[last][1]);
  }
}

export function arrow(path: Path2D, from: number[], to: number[], size: number): void {
  const dx = to[0] - from[0], dy = to[1] - from[1];
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len, uy = dy / len;
  path.moveTo(to[0], to[1]);
  path.lineTo(to[0] - ux * size - uy * size * 0.5, to[1] - uy * size + ux * size * 0.5);
  path.lineTo(to[0] - ux * size + uy * size * 0.5, to[1] - uy * size - ux * size * 0.5);
  path.closePath();
}

/** Outline dashes (screen px) of groups that are no scope but were inferred (names or dataflow). */
export const INFERRED_DASH = [5, 3];

export function roundRect(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, r: number): void {
  r = Math.max(0, Math.min(r, w / 2, h / 2));
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

/** Middles of an edge's segments, the longest segment first (where its label may go). */
export function segmentMiddles(pts: number[][]): number[][] {
  const segs: [number, number[]][] = [];
  for (let i = 1; i < pts.length; i++) {
    const [x0, y0] = pts[i - 1], [x1, y1] = pts[i];
    segs.push([Math.hypot(x1 - x0, y1 - y0), [(x0 + x1) / 2, (y0 + y1) / 2]]);
  }
  segs.sort((a, b) => b[0] - a[0]);
  return segs.map((s) => s[1]);
}

export function midpoint(pts: number[][]): number[] {
  let total = 0;
  for (let i = 1; i < pts.length; i++) total += Math.hypot(pts[i][0] - pts[i - 1][0], pts[i][1] - pts[i - 1][1]);
  let half = total / 2;
  for (let i = 1; i < pts.length; i++) {
    const seg = Math.hypot(pts[i][0] - pts[i - 1][0], pts[i][1] - pts[i - 1][1]);
    if (seg >= half && seg > 0) {
      const t = half / seg;
      return [pts[i - 1][0] + (pts[i][0] - pts[i - 1][0]) * t, pts[i - 1][1] + (pts[i][1] - pts[i - 1][1]) * t];
    }
    half -= seg;
  }
  return pts[0];
}
