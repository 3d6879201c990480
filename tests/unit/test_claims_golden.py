"""The golden claims record (tests/published/golden_claims.py) on constructed cells: claim ids, verdict
words, intervals, the tolerance and the differences it reports. What the published data's claims are
is checked in tests/published/test_published_claims.py."""

from __future__ import annotations

import pandas as pd

from dbexp.experiments import verdicts
from golden_claims import book_verdicts, claim_ids, differences, intervals, record, same_number, verdict_words
from unit_support import REPO


def test_claim_ids_are_slugs_of_the_claim_without_its_link_and_repeats_are_numbered():
    link = '<a href="https://x">source</a>'
    ids = claim_ids([f"MySQL 5.7 to 8.0 lost throughput ({link})", "On insert, GTIDs cost 1.10X more CPU",
                     f"MySQL 5.7 to 8.0 lost throughput ({link})"])
    assert ids == ["mysql-5.7-to-8.0-lost-throughput", "on-insert-gtids-cost-1.10x-more-cpu",
                   "mysql-5.7-to-8.0-lost-throughput-2"]
    long = claim_ids(["word " * 40])[0]
    assert len(long) <= 60 and long.endswith("word")


def test_verdict_words_drop_the_reasons_and_keep_counts_and_directions():
    assert verdict_words("agrees") == ["agrees"]
    assert verdict_words(verdicts.combine(["agrees", "not resolved (the interval spans 1)", "not resolved (x)"])) == [
        "agrees in 1 of 3", "not resolved in 1 of 3", "not resolved in 1 of 3"]
    assert verdict_words("5.7.22: not testable here (the source (8.0.44) only); 9.7.4: agrees in direction, larger") == [
        "not testable here", "agrees in direction, larger"]
    assert verdict_words(verdicts.magnitude(0.943, 1.112, 1.23, 1.23)) == ["disagrees"]
    assert verdict_words("agrees in direction, higher efficiency (fewer wasted wakeups) than the source's in 1 of 3"
                         ) == ["agrees in direction, higher efficiency in 1 of 3"]
    assert verdict_words(verdicts.NOT_MEASURED) == ["not measured"]
    # the reason in parentheses may say anything: it is prose
    assert verdict_words("not resolved (it agrees in 2 of 3 once repeated)") == ["not resolved"]


def test_intervals_are_read_with_their_points_as_printed():
    cell = ("mysql 5.7.22: 0.541 [-0.635, 1.717] misses (1,498/s); x38.5 [32.6, 45.4]; 36.4% [35.7%, 37.1%]; "
            "+117 ns [+110, +123]; 8.0.15/5.7.22 over 5 points, 0.966 to 0.996; H = 1,000 to 10,000; [0.1, 1.0]")
    assert intervals(cell) == [["0.541", "-0.635", "1.717"], ["38.5", "32.6", "45.4"], ["36.4", "35.7", "37.1"],
                               ["+117", "+110", "+123"], [None, "0.966", "0.996"], [None, "1,000", "10,000"],
                               [None, "0.1", "1.0"]]
    assert intervals("from 5.7.22 to 8.0.15, not measured at this scale") == []


def test_numbers_agree_within_their_printed_precision_or_a_relative_millionth():
    assert same_number("0.966", "0.966") and same_number("0.97", "0.966") and same_number("1,000", "1000")
    assert not same_number("0.966", "0.967") and not same_number("1.0", "1.1")
    assert same_number("1000000", "1000000.5") and not same_number("100", "101")
    assert same_number(None, None) and not same_number(None, "1")


def test_the_record_and_its_differences_name_chapter_claim_and_what_changed():
    def table(verdict, measured):
        return pd.DataFrame([{"claim": "A is fast", "verdict": verdict, "measured here": measured},
                             {"claim": "B is slow", "verdict": "agrees", "measured here": "2.0 [1.0, 3.0]"}])

    before = record("ch", table("agrees (because)", "1.000 [0.950, 1.050]"))
    assert before["claims"]["a-is-fast"] == {"verdict": ["agrees"], "witness_ok": None,
                                             "intervals": [["1.000", "0.950", "1.050"]]}
    # reworded prose, the same numbers printed to fewer digits: nothing changed
    assert differences("ch", before, record("ch", table("agrees (for another reason)", "now 1.00 [0.95, 1.05]"))) == []
    after = record("ch", table("disagrees", "0.900 [0.850, 0.950]"))
    assert differences("ch", before, after) == [
        "ch: claim 'a-is-fast': verdict ['agrees'] -> ['disagrees']",
        "ch: claim 'a-is-fast': interval 1 1.000 [0.950, 1.050] -> 0.900 [0.850, 0.950]"]
    gone = {**before, "claims": {"c-is-new": before["claims"]["a-is-fast"]}}
    assert differences("ch", before, gone) == ["ch: claim 'a-is-fast' is no longer in the table",
                                                "ch: claim 'b-is-slow' is no longer in the table",
                                                "ch: claim 'c-is-new' is new: verdict ['agrees']"]


def test_verdict_words_cover_the_verdict_helpers():
    words = book_verdicts(REPO)
    assert {"agrees", "disagrees", "not resolved", "not measured"} <= set(words)
    assert verdicts.NOT_MEASURED.startswith(words)


def test_a_row_with_ledger_ids_is_keyed_by_them():
    assert claim_ids(["one claim", "another", "another"], ["ledger-a, ledger-b", "", ""]) == [
        "ledger-a, ledger-b", "another", "another-2"]
