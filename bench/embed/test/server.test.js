"use strict";
const test = require("node:test");
const assert = require("node:assert");
const { listen, inputs } = require("../server.js");

test("inputs refuses what the wire format does not allow", () => {
  assert.deepStrictEqual(inputs({ input: "a" }), ["a"]);
  assert.match(inputs({ input: [] }), /non-empty/);
  assert.match(inputs({ input: [1] }), /strings only/);
  assert.match(inputs({ input: ["a"], encoding_format: "base64" }), /float/);
  assert.match(inputs({ input: ["a"], dimensions: 3 }), /512/);
  assert.match(inputs(null), /object/);
});

test("POST /v1/embeddings answers OpenAI's shape and near meanings lie near", async () => {
  const server = await listen("127.0.0.1:0");
  try {
    const url = `http://127.0.0.1:${server.address().port}/v1/embeddings`;
    const texts = ["What video games does Nate play?", "I play Counter-Strike every night.", "We went camping by the lake."];
    const res = await fetch(url, { method: "POST", body: JSON.stringify({ model: "x", input: texts, encoding_format: "float" }) });
    assert.strictEqual(res.status, 200);
    const body = await res.json();
    assert.strictEqual(body.data.length, 3);
    const v = body.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
    assert.strictEqual(v[0].length, 512);
    const cos = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0) / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
    assert.ok(cos(v[0], v[1]) > cos(v[0], v[2]), "the game sentence should lie nearer the game question than the camping one");
    const bad = await fetch(url, { method: "POST", body: "{" });
    assert.strictEqual(bad.status, 400);
    const missing = await fetch(url.replace("embeddings", "chat"), { method: "POST", body: "{}" });
    assert.strictEqual(missing.status, 404);
  } finally {
    server.close();
  }
});
