import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The built console goes straight into the Python package, so `fathom serve` serves it with no npm step.
export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "../src/fathom/server/static",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: { proxy: { "/api": "http://127.0.0.1:3000" } },
});
