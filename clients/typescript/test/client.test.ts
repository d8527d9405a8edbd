// The client against a real `engram serve`, named by ENGRAM_URL and
// ENGRAM_API_KEY (.ci/run starts one). Every test writes content of its
// own (a random marker), so the suite can run again on the same server.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { Engram, EngramError, retryWait } from "../src/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const live = Boolean(process.env.ENGRAM_URL && process.env.ENGRAM_API_KEY);
const marker = () => randomUUID().replaceAll("-", "").slice(0, 12);

async function refusal(p: Promise<unknown>): Promise<EngramError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof EngramError, `not an EngramError: ${err}`);
    return err;
  }
  assert.fail("the request was not refused");
}

describe("against engram serve", { skip: live ? false : "ENGRAM_URL and ENGRAM_API_KEY name the server under test" }, () => {
  const engram = new Engram();

  test("the README's TypeScript quickstart runs as written", () => {
    const readme = readFileSync(resolve(here, "../../../../README.md"), "utf8");
    const block = /<!-- quickstart-typescript:begin -->\n```ts\n([\s\S]*?)```\n<!-- quickstart-typescript:end -->/.exec(readme);
    assert.ok(block, "README has no TypeScript quickstart");
    const client = pathToFileURL(resolve(here, "../src/index.js")).href;
    const script = block[1].replace('"@engram-memory/client"', JSON.stringify(client));
    const file = join(mkdtempSync(join(tmpdir(), "engram-ts-")), "quickstart.mjs");
    writeFileSync(file, script);
    const out = execFileSync(process.execPath, [file], { encoding: "utf8" });
    assert.match(out, /^\d\.\d\d User drinks coffee black, no sugar$/m, out);
  });

  test("remember, get, list, update, forget", async () => {
    const m = marker();
    const created = await engram.remember({ content: `Ada prefers tea ${m}`, category: "preference", tags: ["drinks"] });
    assert.equal(created.deduplicated, false);
    assert.deepEqual(created.memory.tags, ["drinks"]);
    const again = await engram.remember({ content: `Ada prefers tea ${m}`, category: "preference" });
    assert.equal(again.deduplicated, true);
    assert.equal(again.memory.id, created.memory.id);
    assert.equal((await engram.getMemory(created.memory.id)).version, 1);
    const page = await engram.listMemories({ q: m, limit: 10 });
    assert.deepEqual(page.items.map((x) => x.id), [created.memory.id]);
    assert.equal((await engram.updateMemory(created.memory.id, { version: 1, importance: 0.9 })).version, 2);
    const stale = await refusal(engram.updateMemory(created.memory.id, { version: 1, importance: 0.1 }));
    assert.equal(stale.code, "conflict");
    assert.equal(stale.status, 409);
    assert.equal((await engram.forget(created.memory.id)).valid, false);
  });

  test("iterMemories follows cursors", async () => {
    const m = marker();
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await engram.remember({ content: `note ${i} ${m}`, category: "work" })).memory.id);
    const seen: string[] = [];
    for await (const mem of engram.iterMemories({ q: m, limit: 2 })) seen.push(mem.id);
    assert.deepEqual(seen.sort(), [...ids].sort());
  });

  test("keys: set, get, tombstone", async () => {
    const key = `/user/日程/牙科-${marker()}`;
    assert.equal((await engram.setKey(key, { text: "下周三上午十点牙科复诊" }, "chat")).key, key);
    assert.deepEqual((await engram.getKey(key)).data, { text: "下周三上午十点牙科复诊" });
    await engram.setKey(key, null, "chat");
    const gone = await refusal(engram.getKey(key));
    assert.equal(gone.code, "not_found");
    assert.match(gone.message, /tombstoned/);
    assert.ok(gone.requestId);
  });

  test("recall into a prompt", async () => {
    const m = marker();
    const mem = (await engram.remember({ content: `The user's cat is called Miso ${m}`, category: "preference" })).memory;
    const recall = await engram.recall({ query: `What is the user's cat called ${m}?`, token_budget: 200 });
    assert.match(recall.recall_id, /^rec_/);
    assert.equal(recall.items[0].id, mem.id);
    assert.ok(recall.items[0].score > 0);
    assert.ok("relevance" in recall.items[0].breakdown);
    assert.ok(recall.context.startsWith("[Agent Memory]"));
    assert.ok(recall.tokens_used <= 200);
    assert.equal((await engram.route("Should I take the job?")).intent, "decide");
  });

  test("feedback is idempotent", async () => {
    const m = marker();
    await engram.remember({ content: `The user likes green tea ${m}`, category: "preference" });
    const recall = await engram.recall({ query: `green tea ${m}`, token_budget: 100 });
    const first = await engram.feedback({ recall_id: recall.recall_id, thumb: "up", idempotency_key: `k-${m}` });
    assert.equal(first.signal, 1);
    assert.equal(first.credited.length, 1);
    assert.ok(first.credited[0].reward > 0);
    const again = await engram.feedback({ recall_id: recall.recall_id, thumb: "up", idempotency_key: `k-${m}` });
    assert.equal(again.replayed, true);
    assert.equal(again.feedback_id, first.feedback_id);
  });

  test("pairs stream for TRL and OpenAI", async () => {
    const m = marker();
    const prompt = `Tea or coffee? ${m}`;
    const a = await engram.logInteraction({ prompt, response: "Tea.", turn_id: m });
    const b = await engram.logInteraction({ prompt, response: "Coffee, black.", turn_id: m });
    await engram.thumb(a.interaction_id, "down");
    assert.equal((await engram.thumb(b.interaction_id, "up")).pairs.length, 1);
    const trl: Record<string, unknown>[] = [];
    for await (const p of engram.exportPairs("trl")) if (p.prompt === prompt) trl.push(p);
    assert.deepEqual(trl, [{ prompt, chosen: "Coffee, black.", rejected: "Tea." }]);
    const openai: Record<string, unknown>[] = [];
    for await (const p of engram.exportPairs("openai")) if (JSON.stringify(p).includes(m)) openai.push(p);
    assert.deepEqual(openai[0].preferred_output, [{ role: "assistant", content: "Coffee, black." }]);
  });

  test("errors carry engram's code and message", async () => {
    const bad = await refusal(engram.recall({ query: "", token_budget: 100 }));
    assert.equal(bad.code, "invalid");
    assert.equal(bad.status, 400);
    assert.ok(bad.message);
    const format = await refusal((async () => {
      for await (const _ of engram.exportPairs("kto" as "trl")) assert.fail("an unknown format streams nothing");
    })());
    assert.equal(format.code, "invalid");
    assert.match(format.message, /kto/);
  });

  test("sessions and one prompt", async () => {
    const sid = `s-${marker()}`;
    await engram.addEvents(sid, [{ type: "message", role: "user", content: "I moved to Lisbon last week" }]);
    assert.match((await engram.sessionContext(sid, 200)).context, /Lisbon/);
    assert.match((await engram.prompt({ query: "Where do I live?", token_budget: 300, session_id: sid })).recall_id, /^rec_/);
    assert.equal(((await engram.endSession(sid, "success")).session as { status: string }).status, "closed");
  });

  test("429 is tried again after Retry-After", async () => {
    // Bad keys from this address make engram answer 429 with Retry-After
    // to everyone here until its guard refills; the client with the good
    // key waits what the server said and goes on.
    const guesser = new Engram({ apiKey: `not-a-key-${marker()}`, maxRetries: 0 });
    let last: EngramError | undefined;
    for (let i = 0; i < 100 && last?.code !== "rate_limited"; i++) {
      last = await refusal(guesser.listMemories({ limit: 1 }));
      assert.ok(["unauthorized", "rate_limited"].includes(last.code), last.code);
    }
    assert.equal(last?.status, 429);
    const waits: number[] = [];
    const patient = new Engram({ sleep: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))) });
    assert.ok(Array.isArray((await patient.listMemories({ limit: 1 })).items));
    assert.ok(waits.length >= 1);
    assert.ok(waits.every((w) => w > 0 && w <= 60_000));
  });

});

test("retryWait honours Retry-After in seconds or as a date, else backs off", () => {
  assert.equal(retryWait("7", 0, 500, 30_000), 7000);
  assert.equal(retryWait("3600", 0, 500, 30_000), 30_000);
  assert.equal(retryWait(null, 0, 500, 30_000), 500);
  assert.equal(retryWait(null, 2, 500, 30_000), 2000);
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  assert.equal(retryWait("Wed, 21 Oct 2015 07:28:05 GMT", 0, 500, 30_000, now), 5000);
  assert.equal(retryWait("soon", 1, 500, 30_000), 1000);
});
