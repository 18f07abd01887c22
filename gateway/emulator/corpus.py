"""The draft model's knowledge: a small built-in corpus, and what it learned from the target's distribution.

A real draft model is trained on the same distribution as its target: it predicts the target's continuation
well where text is templated (JSON keys, SQL clauses, code idioms) and badly on free text, and it copies from
the request's context. The emulated draft model (`drafter.DraftModelProposer`) is an n-gram model (contexts of
1 to `ORDER` tokens) over the request's own prompt and output and over `LearnedModel`: the built-in corpus
below plus the other reference texts registered with the emulated server (the target's own outputs for other
requests: the same distribution, never the request's own reference, which is left out).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from .text import tokenize

CORPUS = """\
The model is a function of the input and the output of the previous step. It is the first of the two \
parts of the system, and the second part is the one that is used to make the final decision. In the \
first case, the value of the parameter is set to the default value, and in the second case it is set \
by the user. This is the reason why the results of the experiment are not the same as the results of \
the previous one. We can see that the number of requests is larger than the number of servers, so the \
time of each request depends on the load of the server. If the value is not set, the function returns \
None. The following example shows how to use the function in a simple program. For more information, \
see the documentation of the module. It is important to note that the order of the arguments is not \
the same in all versions of the library. There are many ways to do this, but the simplest one is to \
use a list of strings. In this case, the result is a new list that contains all of the elements of the \
original list. You can also use a dictionary to store the values, where the keys are the names of the \
items and the values are the counts. The story begins in a small town on the edge of the sea, where \
the people have lived for many years. She looked at the sky and thought about the long way home. He \
said that he would come back in the morning, but he did not come back at all. It was a cold night, and \
the wind was blowing from the north. They walked along the road until they reached the old house at \
the end of the street. I think that this is a good idea, and I would like to know more about it. \
Thank you for your question. Here is a short summary of the main points. First, the data is loaded \
from the file. Second, the data is cleaned and the missing values are removed. Finally, the results \
are written to a new file.

def main(argv=None):
    \"\"\"Run the program and return the exit status.\"\"\"
    args = parse_args(argv)
    if args.verbose:
        print("Starting", file=sys.stderr)
    for item in args.items:
        result = process(item)
        if result is None:
            continue
        results.append(result)
    return 0


class Config:
    def __init__(self, name, value=None):
        self.name = name
        self.value = value

    def __repr__(self):
        return f"{self.__class__.__name__}({self.name!r}, {self.value!r})"


if __name__ == "__main__":
    sys.exit(main())

SELECT id, name, created_at FROM users WHERE status = 'active' ORDER BY created_at DESC LIMIT 10;
SELECT COUNT(*) FROM orders WHERE user_id = 42 AND total > 100;
SELECT u.name, SUM(o.total) AS total FROM users u JOIN orders o ON o.user_id = u.id GROUP BY u.name;

{"id": 1, "name": "example", "type": "object", "value": null, "items": [], "enabled": true}
{"name": "string", "description": "string", "required": ["id", "name"], "properties": {"id": {"type": \
"integer"}, "name": {"type": "string"}}}
"""


@dataclass(frozen=True, slots=True)
class CorpusModel:
    """Most frequent next token after each token pair and each token in the corpus (greedy, ties to
    the first seen), and the corpus's most frequent token."""

    trigram: dict[tuple[str, str], str]
    bigram: dict[str, str]
    unigram: str


def _best(table: dict[object, Counter[str]]) -> dict[object, str]:
    return {key: counts.most_common(1)[0][0] for key, counts in table.items()}


@cache
def corpus_model(text: str = CORPUS) -> CorpusModel:
    """Build (once per text) the corpus's n-gram tables."""
    tokens = tokenize(text)
    tri: dict[object, Counter[str]] = {}
    bi: dict[object, Counter[str]] = {}
    for i in range(1, len(tokens)):
        bi.setdefault(tokens[i - 1], Counter())[tokens[i]] += 1
        if i >= 2:
            tri.setdefault((tokens[i - 2], tokens[i - 1]), Counter())[tokens[i]] += 1
    uni = Counter(tokens).most_common(1)[0][0]
    return CorpusModel(trigram=_best(tri), bigram=_best(bi), unigram=uni)  # type: ignore[arg-type]


BOS = "<s>"  # the learned texts are answers: each starts after this token
ORDER = 4  # the longest context (tokens) the emulated draft model conditions on: a 5-gram model

Counts = dict[tuple[str, ...], dict[str, int]]


def add_counts(table: Counts, tokens: Sequence[str], start: int = 1, order: int = ORDER) -> None:
    """Count every (context of 1..order tokens -> next token) with the next token at index >= start."""
    for i in range(max(start, 1), len(tokens)):
        nxt = tokens[i]
        for k in range(1, min(order, i) + 1):
            succ = table.setdefault(tuple(tokens[i - k : i]), {})
            succ[nxt] = succ.get(nxt, 0) + 1


def ngram_counts(texts: Iterable[Sequence[str]], order: int = ORDER) -> Counts:
    table: Counts = {}
    for tokens in texts:
        add_counts(table, tokens, order=order)
    return table


MAX_LEARNED_TOKENS = 250_000  # the draft learns from the first registered texts up to this many tokens (~4 table
# entries a token: ~100 MB and ~1 s to build at the cap)


@dataclass(frozen=True, slots=True)
class LearnedModel:
    """n-gram counts of the texts the draft model learned from (the built-in corpus and the registered
    references, each after BOS), less those of one left-out text (the request's own reference)."""

    counts: Counts
    left_out: Counts = field(default_factory=dict)

    def successors(self, context: tuple[str, ...]) -> dict[str, int]:
        base = self.counts.get(context)
        if not base:
            return {}
        own = self.left_out.get(context)
        if not own:
            return base
        out = {tok: c - own.get(tok, 0) for tok, c in base.items()}
        return {tok: c for tok, c in out.items() if c > 0}

    def without(self, reference: str | None) -> LearnedModel:
        """The same model as if `reference` (a request's own) had never been learned."""
        if not reference:
            return self
        return LearnedModel(self.counts, ngram_counts([[BOS, *tokenize(reference)]]))


@cache
def _corpus_tokens() -> tuple[str, ...]:
    return tuple(tokenize(CORPUS))


_cached: tuple[tuple[int, int, int], LearnedModel] | None = None


def learned_model(references: Mapping[str, str] | None = None) -> LearnedModel:
    """The built-in corpus plus `references` (the emulated server's registered texts), rebuilt only when they
    change (the last model is cached: the servers of one process share one references mapping)."""
    global _cached
    refs = references or {}
    key = (id(references), len(refs), sum(len(v) for v in refs.values()))
    if _cached is not None and _cached[0] == key:
        return _cached[1]
    texts: list[list[str]] = [list(_corpus_tokens())]
    total = 0
    for text in refs.values():
        if total >= MAX_LEARNED_TOKENS:
            break
        texts.append([BOS, *tokenize(text)])
        total += len(texts[-1])
    model = LearnedModel(ngram_counts(texts))
    _cached = (key, model)
    return model
