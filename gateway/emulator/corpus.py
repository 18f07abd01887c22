"""The draft model's general knowledge: a small built-in corpus and the n-gram tables built from it.

A 1B draft model knows common English, code and JSON idioms but not the request's specifics. The
emulated draft model is a greedy trigram/bigram model over this corpus plus the request's own prompt and
output (see `drafter.DraftModelProposer`), so it guesses function words and syntax well and content
words badly, as small draft models do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
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
