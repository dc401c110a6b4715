"""Make `src/agentload/quality/data/analogies.json`, the quality checks' task set, from the
word-analogy questions of word2vec (`questions-words.txt`, Mikolov et al. 2013, Apache 2.0; the
copy gensim ships as `gensim/test/test_data/questions-words.txt`).

    python bench/quality_analogies.py PATH/TO/questions-words.txt

From each of the file's 14 categories: the first two questions as the prompt's examples, then
`PER_CATEGORY` questions drawn with a fixed seed among those whose answer is in neither example
(so an example never gives the answer away). The same input makes the same file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/agentload/quality/data/analogies.json"
PER_CATEGORY = 20
SEED = 31
SHOTS = 2


def categories(path: Path) -> dict[str, list[list[str]]]:
    """The file's questions by category, each `[a, b, c, d]`: a is to b as c is to d."""
    found: dict[str, list[list[str]]] = {}
    current = ""
    for line in path.read_text().splitlines():
        if line.startswith(":"):
            current = line[1:].strip()
            found[current] = []
        elif line.strip():
            found[current].append(line.split())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="questions-words.txt")
    args = parser.parse_args()
    rng = random.Random(SEED)
    out = {}
    for name, questions in categories(args.source).items():
        shots = questions[:SHOTS]
        given = {word for shot in shots for word in shot}
        pool = [q for q in questions[SHOTS:] if q[3] not in given]
        chosen = sorted(rng.sample(range(len(pool)), PER_CATEGORY))
        out[name] = {
            "examples": [" ".join(q) for q in shots],
            "questions": [" ".join(pool[i]) for i in chosen],
        }
    digest = hashlib.sha256(args.source.read_bytes()).hexdigest()
    document = {
        "source": "word2vec questions-words.txt (Mikolov et al. 2013), as gensim 4.4.0 ships it",
        "source_sha256": digest,
        "licence": "Apache-2.0",
        "made_by": "bench/quality_analogies.py",
        "categories": out,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"{OUT}: {sum(len(c['questions']) for c in out.values())} questions")


if __name__ == "__main__":
    main()
