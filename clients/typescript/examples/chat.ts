// An OpenAI-style chat loop with engram as its memory.
//
//   npm run build
//   ENGRAM_URL=http://127.0.0.1:8080 ENGRAM_API_KEY=$(cat data/api_key) \
//   OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-… OPENAI_MODEL=gpt-4o-mini \
//   node dist/examples/chat.js
//
// Each turn: the user's message goes into the session (L1, and an L2
// episode), engram's /v1/prompt packs persona, session context and the
// memories worth injecting into one budget, the model answers, the
// answer is logged as an interaction, and `/up` or `/down` thumbs it —
// which credits the memories that were in its prompt.

import { createInterface } from "node:readline/promises";
import { stdin, stdout } from "node:process";

import { Engram, type ChatMessage } from "../src/index.js";

const engram = new Engram();
const base = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
const model = process.env.OPENAI_MODEL ?? "gpt-4o-mini";
const session = `chat-${Date.now()}`;

async function complete(messages: ChatMessage[]): Promise<string> {
  const resp = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
    body: JSON.stringify({ model, messages }),
  });
  if (!resp.ok) throw new Error(`chat completions: ${resp.status} ${await resp.text()}`);
  const out = (await resp.json()) as { choices: { message: { content: string } }[] };
  return out.choices[0].message.content;
}

const rl = createInterface({ input: stdin, output: stdout });
const history: ChatMessage[] = [];
let last: string | undefined;
for (;;) {
  const line = (await rl.question("you> ")).trim();
  if (line === "/quit" || line === "") break;
  if (line === "/up" || line === "/down") {
    if (last) {
      const fb = await engram.thumb(last, line === "/up" ? "up" : "down");
      console.log(`(credited ${fb.credited.length} memories)`);
    }
    continue;
  }
  await engram.addEvents(session, [{ type: "message", role: "user", content: line }]);
  const packed = await engram.prompt({ query: line, token_budget: 1500, session_id: session });
  const messages: ChatMessage[] = [
    { role: "system", content: `You are a helpful assistant.\n\n${packed.context}` },
    ...history,
    { role: "user", content: line },
  ];
  const answer = await complete(messages);
  console.log(`assistant> ${answer}`);
  await engram.addEvents(session, [{ type: "message", role: "assistant", content: answer }]);
  last = (await engram.logInteraction({ prompt: messages, response: answer, recall_id: packed.recall_id, session_id: session })).interaction_id;
  history.push({ role: "user", content: line }, { role: "assistant", content: answer });
}
rl.close();
await engram.endSession(session, "success");
