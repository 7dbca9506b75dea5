// The console (docs/admin.md): Preact and uPlot, built by `npm run build:console` (part of
// `npm install` through `prepare`) into dist/console, which src/routes/console.ts serves under /app/.
// Relative asset URLs and hash routes: the same build works under any APP_BASE_PATH. No inline
// script or style is emitted, so the strict Content-Security-Policy holds.
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // A module script needs no polyfill loader: nothing inline.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
});
