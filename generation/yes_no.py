"""Whether a question asks yes or no ("Is the office open on Sundays?", "实习生可以弹性上班吗？",
"¿Puedo teletrabajar…?"): such a question is answered by a quote that says no, so checks
that refuse a quote for stating the opposite, or for putting the thing asked outside the
rules, leave it alone."""

from __future__ import annotations

import re

# Chinese: a closing 吗, 是否 / 能否 / 有没有 anywhere, or a verb asked with its negation (算不算,
# 包不包括, 能不能).
YES_NO_HAN = re.compile(r"[吗么][？?]?$|是否|能否|可否|有没有|([\u4e00-\u9fff])[不没]\1")
# The verb or particle a yes/no question opens with, in English, German, Spanish, French.
# (At the start of the question or of a later sentence of it: "The turnaround is quoted
# in working days. Do bank holidays count?")
_OPENER = re.compile(
    r"(?:^|[.!?。]\s+)\W*(?:is|are|was|were|am|do|does|did|can|could|will|would|shall|"
    r"should|has|have|had|may|might|must|"
    r"ist|sind|war|kann|können|darf|dürfen|muss|müssen|gilt|gelten|gibt|habe|hat|haben|"
    r"bekomme|bekommt|wird|werden|"
    r"puedo|puede|pueden|podemos|es|son|está|están|hay|tengo|tiene|debo|debe|se\s+puede|"
    r"est-ce|puis-je|peut-on|peut|peuvent|dois-je|doit|ai-je|a-t-il|y\s+a-t-il|suis-je)\b",
    re.I,
)


def asks_yes_no(question: str) -> bool:
    return bool(YES_NO_HAN.search(question.strip()) or _OPENER.search(question))
