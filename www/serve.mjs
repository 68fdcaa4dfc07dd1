// A small static server for the demo: GET/HEAD only, no directory listing,
// no path escapes, correct MIME types (application/wasm for the module, so
// browsers can compile it while it streams), and a strict CSP.
//   node www/serve.mjs <folder> [--port N] [--host 127.0.0.1]
// `startServer` is also imported by the browser tests (port 0 = a free port).
import http from 'node:http';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

// 'wasm-unsafe-eval' lets the page compile WebAssembly; nothing else runs
// but same-origin scripts, so injected markup could not execute even if a
// bug let some in (the page never does: all data is set as text). The page
// connects only to itself, or to an edge worker (?worker=) on HTTPS or this
// machine: it reads a worker's tree and its event stream, never sends to one.
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' https: http://127.0.0.1:* http://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function startServer({ root, host = '127.0.0.1', port = 8080, quiet = true } = {}) {
  const base = path.resolve(root);
  const server = http.createServer(async (req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(400, 'bad request\n');
    }
    if (pathname.includes('\0')) return send(400, 'bad request\n');
    let file = path.resolve(base, `.${pathname}`);
    if (file !== base && !file.startsWith(base + path.sep)) return send(403, 'forbidden\n');
    try {
      let stat = await fs.stat(file);
      if (stat.isDirectory()) {
        file = path.join(file, 'index.html');
        stat = await fs.stat(file);
      }
      if (!stat.isFile()) return send(404, 'not found\n');
      res.writeHead(200, {
        'content-type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-length': stat.size,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-security-policy': CSP,
      });
      if (req.method === 'HEAD') return res.end();
      createReadStream(file).pipe(res);
      if (!quiet) console.log(`${req.method} ${pathname}`);
    } catch {
      send(404, 'not found\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address();
      resolve({
        server,
        url: `http://${host}:${bound}/`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const flag = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : fallback;
  };
  const port = Number(flag('--port', process.env.PORT || 8080));
  const host = flag('--host', '127.0.0.1');
  const root = args[0] ?? '.';
  startServer({ root, host, port }).then(
    ({ url }) => {
      console.log(`subagent-tree demo: serving ${root} at ${url}  (Ctrl-C stops)`);
    },
    (e) => {
      console.error(`serve: cannot listen on ${host}:${port}: ${e.message}`);
      process.exit(1);
    },
  );
}
