/**
 * Category icons for the sample dataset: 32×32 PNGs of a white pictogram on
 * a coloured disc, drawn from a few geometric shapes and anti-aliased by
 * 4×4 supersampling. Small enough to serve as map markers.
 */
import { encodePng } from "./png.ts";

type Shape = (x: number, y: number) => boolean;

const circle =
  (cx: number, cy: number, r: number): Shape =>
  (x, y) =>
    (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

const rect =
  (x0: number, y0: number, x1: number, y1: number): Shape =>
  (x, y) =>
    x >= x0 && x <= x1 && y >= y0 && y <= y1;

/** A line from a to b with round ends, `r` wide on each side. */
const capsule =
  (ax: number, ay: number, bx: number, by: number, r: number): Shape =>
  (x, y) => {
    const [dx, dy] = [bx - ax, by - ay];
    const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
    return (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2 <= r * r;
  };

/** Even-odd point-in-polygon test. */
const polygon =
  (...points: [number, number][]): Shape =>
  (x, y) => {
    let inside = false;
    for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
      const [xi, yi] = points[i]!;
      const [xj, yj] = points[j]!;
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
    }
    return inside;
  };

const union =
  (...shapes: Shape[]): Shape =>
  (x, y) =>
    shapes.some((s) => s(x, y));

const minus =
  (shape: Shape, ...holes: Shape[]): Shape =>
  (x, y) =>
    shape(x, y) && !holes.some((h) => h(x, y));

/** The pictograms, in a 32×32 coordinate space. */
export const glyphs = {
  cup: union(
    polygon([9, 12], [21, 12], [20, 21], [10, 21]),
    minus(circle(21.2, 15.8, 3.4), circle(21.2, 15.8, 1.8)),
    capsule(7.5, 23.5, 23.5, 23.5, 1),
    capsule(12.5, 5.8, 12.5, 9.2, 0.9),
    capsule(17, 5.8, 17, 9.2, 0.9),
  ),
  cutlery: union(
    capsule(10, 7, 10, 12, 0.75),
    capsule(12.5, 7, 12.5, 12, 0.75),
    capsule(15, 7, 15, 12, 0.75),
    rect(9.25, 11.5, 15.75, 14),
    polygon([9.25, 14], [15.75, 14], [13.7, 16], [11.3, 16]),
    capsule(12.5, 15, 12.5, 25, 1.2),
    polygon([19.2, 16.5], [19.2, 7.5], [20.6, 6.8], [22.6, 10.5], [22.6, 16.5]),
    capsule(20.9, 16, 20.9, 25, 1.2),
  ),
  cocktail: union(
    polygon([8.5, 8.5], [23.5, 8.5], [16, 17.5]),
    rect(15.1, 17, 16.9, 23),
    capsule(11.5, 23.5, 20.5, 23.5, 1),
    circle(21.5, 6.5, 1.8),
  ),
  columns: union(
    polygon([6.5, 12], [25.5, 12], [16, 6]),
    rect(7.5, 12, 24.5, 13.6),
    rect(9, 14.5, 11, 21.5),
    rect(13, 14.5, 15, 21.5),
    rect(17, 14.5, 19, 21.5),
    rect(21, 14.5, 23, 21.5),
    rect(7.5, 22.5, 24.5, 25),
  ),
  tree: union(
    circle(16, 11.5, 5.8),
    circle(11.8, 14.8, 4.4),
    circle(20.2, 14.8, 4.4),
    rect(15, 17, 17, 25),
    capsule(10.5, 25, 21.5, 25, 0.9),
  ),
  basket: union(
    minus(
      polygon([7, 15], [25, 15], [22.5, 24.5], [9.5, 24.5]),
      rect(12, 17.5, 13.4, 22.5),
      rect(15.3, 17.5, 16.7, 22.5),
      rect(18.6, 17.5, 20, 22.5),
    ),
    minus(circle(16, 15, 7), circle(16, 15, 5.4), rect(0, 15, 32, 32)),
  ),
  book: union(
    polygon([6.5, 9.5], [15.2, 11.2], [15.2, 24], [6.5, 22.3]),
    polygon([16.8, 11.2], [25.5, 9.5], [25.5, 22.3], [16.8, 24]),
  ),
  mountains: union(
    polygon([5.5, 23.5], [13.5, 10.5], [21.5, 23.5]),
    polygon([14.5, 23.5], [20.5, 14.5], [26.5, 23.5]),
    circle(22, 9.5, 2.6),
  ),
  frame: union(
    minus(rect(7.5, 8.5, 24.5, 23.5), rect(9.8, 10.8, 22.2, 21.2)),
    polygon([11, 21.2], [15, 14.5], [19, 21.2]),
    polygon([16, 21.2], [18.5, 17], [21, 21.2]),
    circle(19, 13.8, 1.4),
  ),
  baguette: minus(
    capsule(9, 23, 23, 9, 3.4),
    capsule(11.8, 18.2, 14.2, 18.2, 0.55),
    capsule(14.8, 15.2, 17.2, 15.2, 0.55),
    capsule(17.8, 12.2, 20.2, 12.2, 0.55),
  ),
  note: union(
    circle(11.3, 21.6, 3),
    circle(20.8, 19.6, 3),
    rect(13.3, 9, 14.8, 21.6),
    rect(22.8, 7, 24.3, 19.6),
    polygon([13.3, 8.6], [24.3, 6.6], [24.3, 9.8], [13.3, 11.8]),
  ),
  flag: union(rect(10, 6.5, 11.7, 24.5), polygon([11.7, 7], [23.5, 10.8], [11.7, 14.8]), capsule(7.5, 25, 14.2, 25, 1)),
} satisfies Record<string, Shape>;

export type Glyph = keyof typeof glyphs;

const SIZE = 32;
const SAMPLES = 4;
const WHITE = [255, 255, 255] as const;

function hexColor(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.replace("#", ""), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** RGBA pixels of `glyph` in white on a disc of `color` with a darker rim. */
export function drawIcon(glyph: Glyph, color: string): Uint8Array {
  const fill = hexColor(color);
  const rim = fill.map((c) => Math.round(c * 0.72)) as [number, number, number];
  const shape = glyphs[glyph];
  const pixels = new Uint8Array(SIZE * SIZE * 4);
  for (let py = 0; py < SIZE; py++) {
    for (let px = 0; px < SIZE; px++) {
      let covered = 0;
      const sum = [0, 0, 0];
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = px + (sx + 0.5) / SAMPLES;
          const y = py + (sy + 0.5) / SAMPLES;
          const r2 = (x - 16) ** 2 + (y - 16) ** 2;
          if (r2 > 15.6 ** 2) continue;
          covered++;
          const color = r2 > 14.4 ** 2 ? rim : shape(x, y) ? WHITE : fill;
          for (let i = 0; i < 3; i++) sum[i]! += color[i]!;
        }
      }
      if (covered === 0) continue;
      const at = (py * SIZE + px) * 4;
      for (let i = 0; i < 3; i++) pixels[at + i] = Math.round(sum[i]! / covered);
      pixels[at + 3] = Math.round((255 * covered) / (SAMPLES * SAMPLES));
    }
  }
  return pixels;
}

/** The icon as a PNG file. */
export function iconPng(glyph: Glyph, color: string): Promise<Uint8Array> {
  return encodePng(SIZE, SIZE, drawIcon(glyph, color));
}
