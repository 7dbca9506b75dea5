// The code's image: an SVG of 180×50 as a data URL the widget shows in an <img>. The glyphs are
// outlines of svg-captcha's bundled font (Comismsh, through its opentype.js font object), so no font
// is fetched or needed anywhere; each character gets its own size, rotation, skew, offset and colour,
// noise curves cross the text, and an feTurbulence displacement warps the whole (a new seed per
// image). test/unit/code-challenge-ocr.test.ts holds tesseract to fewer than 5 % of codes read.
// Rendering takes about 0.3 ms once warm (measured in docs/code-challenge.md), so it runs inline;
// the font is parsed on the first call (createImageRenderer warms it at start-up, not at import).
import { createRequire } from 'node:module';
import { randomInt } from 'node:crypto';

export const IMAGE_WIDTH = 180;
export const IMAGE_HEIGHT = 50;

interface Glyph { readonly advanceWidth?: number }
interface OpentypePath { toPathData(decimals: number): string }
export interface Font {
  readonly unitsPerEm: number;
  readonly ascender: number;
  readonly descender: number;
  charToGlyph(ch: string): Glyph;
  getPath(text: string, x: number, y: number, size: number): OpentypePath;
}

/** Dark enough on the light background for people; varied so no single colour separates text from noise. */
const INK = ['#1f3a93', '#8e1b3a', '#245c2a', '#5b2c83', '#7a4a00', '#0b5563', '#333333', '#a0325a'];
const BACKGROUND = '#f4f1ea';

export type ImageRenderer = (code: string) => string;

/** Loads the font (synchronous file read: call at start-up) and returns the renderer. */
export function createImageRenderer(): ImageRenderer {
  const font = loadCaptchaFont();
  const render = (code: string): string => `data:image/svg+xml;base64,${Buffer.from(renderSvg(font, code)).toString('base64')}`;
  render('WARM7');
  return render;
}

/** svg-captcha's font, parsed by opentype.js when svg-captcha is first required. */
export function loadCaptchaFont(): Font {
  return (createRequire(import.meta.url)('svg-captcha') as { options: { font: Font } }).options.font;
}

/** The SVG text of `code` (exported for the OCR test, which renders it as the browser does). */
export function renderSvg(font: Font, code: string): string {
  const w = IMAGE_WIDTH;
  const h = IMAGE_HEIGHT;
  const slot = (w - 16) / code.length;
  let glyphs = '';
  for (let i = 0; i < code.length; i++) {
    const ch = code[i]!;
    const size = randomInt(42, 52);
    const advance = ((font.charToGlyph(ch).advanceWidth ?? 0) * size) / font.unitsPerEm;
    const cx = 8 + slot * (i + 0.5) + randomInt(-3, 4);
    const cy = h / 2 + randomInt(-4, 5);
    const baseline = cy + ((font.ascender + font.descender) * size) / font.unitsPerEm / 2;
    const d = font.getPath(ch, cx - advance / 2, baseline, size).toPathData(1);
    const rotate = randomInt(-28, 29);
    const skew = randomInt(-14, 15);
    const x = cx.toFixed(1);
    const ink = pick(INK);
    glyphs += `<path fill="${ink}" stroke="${ink}" stroke-width="1.4" stroke-linejoin="round" transform="translate(${x} ${cy}) rotate(${rotate}) skewX(${skew}) translate(-${x} -${cy})" d="${d}"/>`;
  }
  let noise = '';
  for (let i = 0; i < 4; i++) {
    const y = () => randomInt(4, h - 4);
    noise += `<path d="M${randomInt(0, 20)} ${y()}C${randomInt(40, 80)} ${y()},${randomInt(100, 140)} ${y()},${randomInt(160, w)} ${y()}" ` +
      `stroke="${pick(INK)}" stroke-width="${i < 2 ? 1.6 : 1}" fill="none"/>`;
  }
  for (let i = 0; i < 24; i++) {
    noise += `<circle cx="${randomInt(0, w)}" cy="${randomInt(0, h)}" r="${randomInt(1, 3)}" fill="${pick(INK)}"/>`;
  }
  const seed = randomInt(1, 1_000_000);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<filter id="w" x="-5%" y="-5%" width="110%" height="110%"><feTurbulence type="fractalNoise" baseFrequency="0.02 0.05" ` +
    `numOctaves="1" seed="${seed}"/><feDisplacementMap in="SourceGraphic" scale="5" xChannelSelector="R" yChannelSelector="G"/></filter>` +
    `<rect width="100%" height="100%" fill="${BACKGROUND}"/><g filter="url(#w)">${glyphs}${noise}</g></svg>`;
}

function pick(list: readonly string[]): string {
  return list[randomInt(list.length)]!;
}
