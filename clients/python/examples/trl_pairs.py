"""Remember, recall into a prompt, thumb the answers, export pairs for TRL.

    PYTHONPATH=clients/python ENGRAM_URL=http://127.0.0.1:8080 \
    ENGRAM_API_KEY=$(cat data/api_key) python3 clients/python/examples/trl_pairs.py pairs.jsonl

The file it writes is TRL's standard preference format, one
{"prompt", "chosen", "rejected"} per line, for DPOTrainer:

    from datasets import load_dataset
    train = load_dataset("json", data_files="pairs.jsonl", split="train")
"""

import json
import sys

from engram import Client


def answer(prompt: str, style: str) -> str:
    """Stands in for the model: a real product calls its LLM here."""
    return {"good": "Black, no sugar, as always.", "bad": "A caramel latte with extra sugar."}[style]


def main(out_path: str) -> None:
    client = Client()
    client.remember("User drinks coffee black, no sugar", category="preference", tags=["coffee"])

    question = "What coffee should I order for the user?"
    recall = client.recall(question, token_budget=300)
    prompt = f"{recall.context}\n\nQuestion: {question}"
    print(f"injected {len(recall.items)} memories, {recall.tokens_used}/{recall.token_budget} tokens")

    # Two answers to the same turn (a regeneration); the user likes one.
    liked = client.log_interaction(prompt, answer(prompt, "good"), recall_id=recall.recall_id, turn_id="order-1")
    disliked = client.log_interaction(prompt, answer(prompt, "bad"), recall_id=recall.recall_id, turn_id="order-1")
    client.thumb(liked.interaction_id, "up", reason="knows my order")
    result = client.thumb(disliked.interaction_id, "down", reason="I never take sugar")
    print(f"feedback {result.feedback_id}: {len(result.credited)} memories credited, {len(result.pairs)} pair(s)")

    written = 0
    with open(out_path, "w", encoding="utf-8") as out:
        for row in client.export_pairs(format="trl"):  # streamed, line by line
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            written += 1
    print(f"wrote {written} pairs to {out_path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "pairs.jsonl")
