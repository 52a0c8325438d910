"""judging_rules: real Codeforces statement excerpts, tolerance spellings, truncated outputs.

The excerpts are copied from the codefu_easy reference set (CODEFU_REAL_DATA), a few sentences
around each phrase with the statement's section headers, so these tests run without it; the
`real_data` test at the end runs over all 840 statements.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_data.judging_rules import parse_tolerance, rules_from_statement, truncated_output
from codefu_sandbox.rules import JudgingRules, checker_params


def _statement(excerpt: str) -> str:
    """An excerpt as the dataset holds it: each paragraph on one line, blank lines between."""
    paragraphs = textwrap.dedent(excerpt).strip("\n").split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.split("\n")) for p in paragraphs)


# (problem, excerpt, the rules it states), checked by reading each statement.
EXCERPTS: list[tuple[str, str, JudgingRules]] = [
    (
        "867_A. Between the Offices",
        r"""
        Output

        Print "YES" if you flew more times from Seattle to San Francisco, and "NO" otherwise.

        You can print each letter in any case (upper or lower).
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1373_B. 01 Game",
        r"""
        Output

        For each test case print answer in the single line.

        If Alice can win print DA (YES in Russian) in any register. Otherwise print NET (NO in
        Russian) in any register.

        Example

        Input

        3 01 1111 0011

        Output

        DA NET NET
        """,
        JudgingRules(any_case_words=("DA", "NET")),
    ),
    (
        "1075_A. The King's Race",
        r"""
        Output

        In a single line print the answer "White" (without quotes), if the white king will win,
        or "Black" (without quotes), if the black king will win.

        You can print each letter in any case (upper or lower).
        """,
        JudgingRules(any_case_words=("Black", "White")),
    ),
    (
        "1030_A. In Search of an Easy Problem",
        r"""
        Output

        Print one word: "EASY" if the problem is easy according to all responses, or "HARD" if
        there is at least one person who thinks the problem is hard.

        You may print every letter in any register: "EASY", "easy", "EaSY" and "eAsY" all will
        be processed correctly.
        """,
        JudgingRules(any_case_words=("EASY", "HARD")),
    ),
    (
        "1110_A. Parity",
        r"""
        Output

        Print "even" if n is even, otherwise print "odd".

        You can print each letter in any case (upper or lower).
        """,
        JudgingRules(any_case_words=("even", "odd")),
    ),
    (
        "1245_A. Good ol' Numbers Coloring",
        r"""
        Output

        For each test case, print one line containing either "Infinite" or "Finite" (without the
        quotes). Output is case-insensitive (i.e. "infinite", "inFiNite" or "finiTE" are all
        valid answers).
        """,
        JudgingRules(any_case_words=("Finite", "Infinite")),
    ),
    (
        "1380_A. Three Indices",
        r"""
        Output

        For each test case:

        * if there are such indices i, j and k, print YES (case insensitive) and the indices
        themselves; * if there are no such indices, print NO (case insensitive).

        If there are multiple valid triples of indices, print any of them.

        Example

        Input

        3 4 2 1 4 3 6 4 6 1 2 5 3 5 5 3 1 2 4

        Output

        YES 2 3 4 YES 3 5 6 NO
        """,
        JudgingRules(any_case_words=("NO", "YES"), several_answers=True),
    ),
    (
        "1536_A. Omkar and Bad Story",
        r"""
        Output

        For each test case, output one line containing YES if Omkar can create a nice array b by
        adding elements to a and NO otherwise. The case of each letter does not matter, so yEs
        and nO will also be accepted.

        If the first line is YES, output a second line containing a single integer k (n ≤ k ≤
        300).

        Then output one line containing k distinct integers b_1, b_2, ⋅⋅⋅, b_k (-10^9 ≤ b_i ≤
        10^9), the elements of the nice array b. b_1, b_2, ⋅⋅⋅, b_k can be in any order. For
        each a_i in a, a_i must appear at least once in b.

        It can be proved that if Omkar can create such an array b, then he can also do so in a
        way that satisfies the above constraints.

        If multiple solutions exist, you can print any.

        Example

        Input

        4 3 3 0 9 2 3 4 5 -7 3 13 -2 8 4 4 8 12 6

        Output

        yes 4 6 0 3 9 yEs 5 5 3 1 2 4 NO Yes 6 8 12 6 2 4 10
        """,
        JudgingRules(any_case_words=("NO", "YES"), several_answers=True),
    ),
    (
        "841_A. Generous Kefa",
        r"""
        Output

        Answer to the task — «YES» or «NO» in a single line.

        You can choose the case (lower or upper) for each letter arbitrary.
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "886_A. ACM ICPC",
        r"""
        Output

        Print "YES" (quotes for clarity), if it is possible to build teams with equal score, and
        "NO" otherwise.

        You can print each character either upper- or lowercase ("YeS" and "yes" are valid when
        the answer is "YES").
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1301_A. Three Strings",
        r"""
        Output

        Print t lines with answers for all test cases. For each test case:

        If it is possible to make string a equal to string b print "YES" (without quotes),
        otherwise print "NO" (without quotes).

        You can print either lowercase or uppercase letters in the answers.
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "821_A. Okabe and Future Gadget Laboratory",
        r"""
        Output

        Print "Yes" if the given lab is good and "No" otherwise.

        You can output each letter in upper or lower case.
        """,
        JudgingRules(any_case_words=("No", "Yes")),
    ),
    (
        "939_A. Love Triangle",
        r"""
        Output

        Output «YES» if there is a love triangle consisting of planes on Earth. Otherwise,
        output «NO».

        You can output any letter in lower case or in upper case.
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1054_A. Elevator or Stairs?",
        r"""
        Output

        If the time it will take to use the elevator is not greater than the time it will take
        to use the stairs, print «YES» (without quotes), otherwise print «NO> (without quotes).

        You can print each letter in any case (upper or lower).
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1542_A. Odd Set",
        r"""
        Output

        For each test case, print "Yes" if it can be split into exactly n pairs so that the sum
        of the two elements in each pair is odd, and "No" otherwise. You can print each letter
        in any case.
        """,
        JudgingRules(any_case_words=("No", "Yes")),
    ),
    (
        "1351_B. Square?",
        r"""
        Output

        Print t answers, each of which is a string "YES" (in the case of a positive answer) or
        "NO" (in the case of a negative answer). The letters in words can be printed in any case
        (upper or lower).
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1505_A. Is it rated - 2",
        r"""
        Interaction

        This is an interactive problem. You need to read participants' queries from standard
        input and print your responses to standard output. You don't know the number of queries
        upfront, so you'll need to process them as you get them; you'll know you're done once
        you reach the end of the file.

        In each query, you will be asked the question, written in one line. You have to answer
        it correctly, patiently and without any display of emotions. Your response is
        case-insensitive.

        Please make sure to use the stream flushing operation after each response in order not
        to leave part of your output in some buffer.

        Example

        Input

        Is it rated? Is it rated? Is it rated?

        Output

        NO NO NO
        """,
        JudgingRules(any_case_words=("NO",)),
    ),
    (
        "1521_A. Nastia and Nearly Good Numbers",
        r"""
        Output

        For each test case print:

        * "YES" and 3 different positive integers x, y, and z (1 ≤ x, y, z ≤ 10^{18}) such that
        exactly one of them is good and the other 2 are nearly good, and x + y = z. * "NO" if no
        answer exists.

        You can print each character of "YES" or "NO" in any case.

        If there are multiple answers, print any.
        """,
        JudgingRules(any_case_words=("NO", "YES"), several_answers=True),
    ),
    (
        "868_A. Bark to Unlock",
        r"""
        Output

        Print "YES" if Kashtanka can bark several words in a line forming a string containing
        the password, and "NO" otherwise.

        You can print each letter in arbitrary case (upper or lower).
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "1445_A. Array Rearrangment",
        r"""
        Output

        For each test case print Yes if one can rearrange the corresponding array b so that a_i
        + b_i ≤ x holds for each i (1 ≤ i ≤ n) or No otherwise.

        Each character can be printed in any case.

        Example

        Input

        4 3 4 1 2 3 1 1 2

        2 6 1 4 2 5

        4 4 1 2 3 4 1 2 3 4

        1 5 5 5

        Output

        Yes Yes No No
        """,
        JudgingRules(any_case_words=("No", "Yes")),
    ),
    (
        "1257_B. Magic Stick",
        r"""
        The spells can be used any number of times in any order.

        Output

        For the i-th test case print the answer on it — YES if Petya can get the number y from
        the number x using known spells, and NO otherwise.

        You may print every letter in any case you want (so, for example, the strings yEs, yes,
        Yes and YES will all be recognized as positive answer).

        Example

        Input

        7 2 3 1 1 3 6 6 8 1 2 4 1 31235 6578234

        Output

        YES YES NO YES NO YES YES
        """,
        JudgingRules(any_case_words=("NO", "YES")),
    ),
    (
        "160_A. Twins",
        r"""
        In any case, the minimum number of coins equals 2.

        Output

        In the single line print the single number — the minimum needed number of coins.
        """,
        JudgingRules(),
    ),
    (
        "1215_A. Yellow Cards",
        r"""
        In the second example the maximum possible number of yellow cards has been shown (3 ⋅ 6
        + 1 ⋅ 7 = 25), so in any case all players were sent off.

        Output

        Print two integers — the minimum and the maximum number of players that could have been
        thrown out of the game.
        """,
        JudgingRules(),
    ),
    (
        "112_A. Petya and Strings",
        r"""
        The letters' case does not matter, that is an uppercase letter is considered equivalent
        to the corresponding lowercase letter.

        Output

        If the first string is less than the second one, print "-1". If the second string is
        less than the first one, print "1". If the strings are equal, print "0". Note that the
        letters' case is not taken into consideration when the strings are compared.
        """,
        JudgingRules(),
    ),
    (
        "918_A. Eleven",
        r"""
        Her friend suggested that her name should only consist of uppercase and lowercase
        letters 'O'.

        Output

        Print Eleven's new name on the first and only line of output.
        """,
        JudgingRules(),
    ),
    (
        "1191_A. Tokitsukaze and Enhancement",
        r"""
        Output

        Print an integer a (0 ≤ a ≤ 2) and an uppercase letter b (b ∈ { A, B, C, D }),
        representing that the best way is to increase her HP by a, and then the category becomes
        b.

        Note that the output characters are case-sensitive.
        """,
        JudgingRules(),
    ),
    (
        "5_A. Chat Server's Outgoing Traffic",
        r"""
        All names are case-sensitive.

        Output

        Print a single number — answer to the problem.
        """,
        JudgingRules(),
    ),
    (
        "1281_A. Suffix Three",
        r"""
        Output

        For each test case, print a single line containing either "FILIPINO", "JAPANESE", or
        "KOREAN" (all in uppercase, without quotes), depending on the detected language.
        """,
        JudgingRules(),
    ),
    (
        "452_A. Eevee",
        r"""
        Output

        Print a name of the pokemon that Eevee can evolve into that matches the pattern in the
        input. Use lower case letters only to print the name (in particular, do not capitalize
        the first letter).
        """,
        JudgingRules(),
    ),
    (
        "157_B. Trace",
        r"""
        Output

        Print the single real number — total area of the part of the wall that is painted red.
        The answer is accepted if absolute or relative error doesn't exceed 10 - 4.
        """,
        JudgingRules(float_tolerance=0.0001, tolerance_mode="absolute_or_relative"),
    ),
    (
        "200_B. Drinks",
        r"""
        Output

        Print the volume fraction in percent of orange juice in Vasya's cocktail. The answer
        will be considered correct if the absolute or relative error does not exceed 10  - 4.
        """,
        JudgingRules(float_tolerance=0.0001, tolerance_mode="absolute_or_relative"),
    ),
    (
        "706_A. Beru-taxi",
        r"""
        Output

        Print a single real value — the minimum time Vasiliy needs to get in any of the
        Beru-taxi cars. You answer will be considered correct if its absolute or relative error
        does not exceed 10 - 6.

        Namely: let's assume that your answer is a, and the answer of the jury is b. The checker
        program will consider your answer correct, if <image>.
        """,
        JudgingRules(float_tolerance=1e-06, tolerance_mode="absolute_or_relative"),
    ),
    (
        "1199_B. Water Lily",
        r"""
        Output

        Print a single number — the depth of the lake at point A. The absolute or relative error
        should not exceed 10^{-6}.

        Formally, let your answer be A, and the jury's answer be B. Your answer is accepted if
        and only if \frac{|A - B|}{max{(1, |B|)}} ≤ 10^{-6}.
        """,
        JudgingRules(float_tolerance=1e-06, tolerance_mode="absolute_or_relative"),
    ),
    (
        "1293_B. JOE is on TV!",
        r"""
        Output

        Print a number denoting the maximum prize (in dollars) JOE could have.

        Your answer will be considered correct if it's absolute or relative error won't exceed
        10^{-4}. In other words, if your answer is a and the jury answer is b, then it must hold
        that (|a - b|)/(max(1, b)) ≤ 10^{-4}.
        """,
        JudgingRules(float_tolerance=0.0001, tolerance_mode="absolute_or_relative"),
    ),
    (
        "919_A. Supermarket",
        r"""
        Output

        The only line, denoting the minimum cost for m kilos of apples. Please make sure that
        the absolute or relative error between your answer and the correct answer won't exceed
        10^{-6}.

        Formally, let your answer be x, and the jury's answer be y. Your answer is considered
        correct if \frac{|x - y|}{max{(1, |y|)}} ≤ 10^{-6}.
        """,
        JudgingRules(float_tolerance=1e-06, tolerance_mode="absolute_or_relative"),
    ),
    (
        "99_A. Help Far Away Kingdom",
        r"""
        Most damage those strange creatures inflicted upon the kingdom was that they loved high
        precision numbers.

        Output

        If the last number of the integer part is not equal to 9, print the rounded-up number
        without leading zeroes. Otherwise, print the message "GOTO Vasilisa." (without the
        quotes).
        """,
        JudgingRules(),
    ),
    (
        "604_A. Uncowed Forces",
        r"""
        All arithmetic operations are performed with absolute precision and no rounding.

        Output

        Print a single integer, the value of Kevin's final score.
        """,
        JudgingRules(),
    ),
    (
        "978_B. File Name",
        r"""
        In this case, the file is not sent and an error message is displayed.

        Output

        Print the minimum number of characters to remove from the file name so after that the
        name does not contain "xxx" as a substring. If initially the file name dost not contain
        a forbidden substring "xxx", print 0.
        """,
        JudgingRules(),
    ),
    (
        "716_A. Crazy Computer",
        r"""
        Then, a word is typed at the second 10, so there will be two words on the screen, as the
        old word won't disappear because 10 - 9 ≤ 1.

        Output

        Print a single positive integer, the number of words that remain on the screen after all
        n words was typed, in other words, at the second tn.
        """,
        JudgingRules(),
    ),
    (
        "1400_A. String Similarity",
        r"""
        Output

        For each test case, print the corresponding binary string w of length n. If there are
        multiple such strings — print any of them. It can be shown that at least one string w
        meeting the constraints always exists.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "898_A. Rounding",
        r"""
        Any of these answers is correct, so you can print 0 or 10.

        Output

        Print result of rounding n. Pay attention that in some cases answer isn't unique. In
        that case print any correct answer.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "3_A. Shortest path of the king",
        r"""
        Output

        In the first line print n — minimum number of the king's moves. Then in n lines print
        the moves themselves. Each move is described with one of the 8: L, R, U, D, LU, LD, RU
        or RD.

        L, R, U, D stand respectively for moves left, right, up and down (according to the
        picture), and 2-letter combinations stand for diagonal moves. If the answer is not
        unique, print any of them.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "770_A. New Password",
        r"""
        Output

        Print any password which satisfies all conditions given by Innokentiy.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "755_A. PolandBall and Hypothesis",
        r"""
        Output

        Output such m that n·m + 1 is not a prime number. Your answer will be considered correct
        if you output any suitable m such that 1 ≤ m ≤ 103. It is guaranteed the the answer
        exists.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "1520_C. Not Adjacent Matrix",
        r"""
        Output

        For each test case, output:

        * -1, if the required matrix does not exist; * the required matrix, otherwise (any such
        matrix if many of them exist).

        The matrix should be outputted as n lines, where each line contains n integers.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "1093_B. Letters Rearranging",
        r"""
        Other examples (not all) of correct answers to the second query: "ababaca", "abcabaa",
        "baacaba".

        Output

        Print t lines. In the i-th line print the answer to the i-th query: -1 if it is
        impossible to obtain a good string by rearranging the letters of s_i and any good string
        which can be obtained from the given one (by rearranging the letters) otherwise.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "1343_A. Candies",
        r"""
        Output

        Print one integer — any positive integer value of x so there is an integer k>1 that x +
        2x + 4x + ... + 2^{k-1} x = n.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "1385_A. Three Pairwise Maximums",
        r"""
        Output

        For each test case, print the answer:

        * "NO" in the only line of the output if a solution doesn't exist; * or "YES" in the
        first line and any valid triple of positive integers a, b and c (1 ≤ a, b, c ≤ 10^9) in
        the second line. You can print a, b and c in any order.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "1056_A. Determine Line",
        r"""
        Output

        Print all tram lines that Arkady could be in, in arbitrary order.
        """,
        JudgingRules(several_answers=True, any_order="all"),
    ),
    (
        "998_A. Balloons",
        r"""
        Output

        If it's impossible to divide the balloons satisfying the conditions above, print -1.

        Otherwise, print an integer k — the number of packets to give to Grigory followed by k
        distinct integers from 1 to n — the indices of those. The order of packets doesn't
        matter.

        If there are multiple ways to divide balloons, output any of them.
        """,
        JudgingRules(several_answers=True),
    ),
    (
        "987_A. Infinity Gauntlet",
        r"""
        Output

        In the first line output one integer m (0 ≤ m ≤ 6) — the number of absent Gems.

        Then in m lines print the names of absent Gems, each on its own line. Words used for
        names are: Power, Time, Space, Soul, Reality, Mind. Names can be printed in any order.
        Keep the first letter uppercase, others lowercase.
        """,
        JudgingRules(several_answers=True, any_order="all"),
    ),
    (
        "306_A. Candies",
        r"""
        Print ai in any order, separate the numbers by spaces.

        Output

        Print the required sequence a1, a2, ..., am, where ai is the number of candies in the
        i-th friend's present. All numbers ai must be positive integers, total up to n, the
        maximum one should differ from the minimum one by the smallest possible value.
        """,
        JudgingRules(several_answers=True, any_order="all"),
    ),
    (
        "1195_B. Sport Mafia",
        r"""
        Output

        Print a single integer — the number of candies, which Alya ate. Please note, that in
        this problem there aren't multiple possible answers — the answer is unique for any input
        data.
        """,
        JudgingRules(),
    ),
    (
        "1473_B. String LCM",
        r"""
        Output

        For each test case, print LCM(s, t) if it exists; otherwise, print -1. It can be shown
        that if LCM(s, t) exists, it is unique.
        """,
        JudgingRules(),
    ),
    (
        "230_A. Dragons",
        r"""
        Kirito can fight the dragons in any order.

        Output

        On a single line print "YES" (without the quotes), if Kirito can move on to the next
        level and print "NO" (without the quotes), if he can't.
        """,
        JudgingRules(),
    ),
    (
        "282_A. Bit++",
        r"""
        The operation and the variable can be written in any order.

        Output

        Print a single integer — the final value of x.
        """,
        JudgingRules(),
    ),
    (
        "1041_A. Heist",
        r"""
        The integers a_i are given in arbitrary order and are pairwise distinct.

        Output

        Print the minimum possible number of keyboards that have been stolen if the staff
        remember neither x nor the number of keyboards in the store before the heist.
        """,
        JudgingRules(),
    ),
    (
        "1036_A. Function Height",
        r"""
        One of the possible answers to the first example:

        <image>

        The area of this plot is 3, the height of this plot is 1.

        Output

        Print one integer — the minimum possible height of a plot consisting of 2n+1 vertices
        and with an area equals k. It is easy to see that any answer which can be obtained by
        performing moves described above always exists and is an integer number not exceeding
        10^{18}.
        """,
        JudgingRules(),
    ),
    (
        "368_A. Sereja and Coat Rack",
        r"""
        Naturally, each guest wants to hang his clothes on an available hook with minimum price
        (if there are multiple such hooks, he chooses any of them).

        Output

        In a single line print a single integer — the answer to the problem.
        """,
        JudgingRules(),
    ),
    (
        "1399_A. Remove Smallest",
        r"""
        If two elements are equal, you can remove any of them (but exactly one).

        Output

        For each test case, print the answer: "YES" if it is possible to obtain the array
        consisting of only one element using several (possibly, zero) moves described in the
        problem statement, or "NO" otherwise.
        """,
        JudgingRules(),
    ),
    (
        "981_A. Antipalindrome",
        r"""
        Note that there can be multiple longest substrings that are not palindromes, but their
        length is unique.

        Output

        If there is such a substring in s that is not a palindrome, print the maximum length of
        such a substring. Otherwise print 0.

        Note that there can be multiple longest substrings that are not palindromes, but their
        length is unique.
        """,
        JudgingRules(),
    ),
    (
        "746_A. Compote",
        r"""
        Output

        Print the maximum total number of lemons, apples and pears from which Nikolay can cook
        the compote.
        """,
        JudgingRules(),
    ),
    (
        "1433_C. Dominant Piranha",
        r"""
        Your task is to find any dominant piranha in the aquarium or determine if there are no
        such piranhas.

        Output

        For each test case, print the answer: -1 if there are no dominant piranhas in the
        aquarium or index of any dominant piranha otherwise. If there are several answers, you
        can print any.
        """,
        JudgingRules(several_answers=True),
    ),
]


@pytest.mark.parametrize(("name", "excerpt", "expected"), EXCERPTS, ids=[e[0] for e in EXCERPTS])
def test_real_statement_excerpt(name: str, excerpt: str, expected: JudgingRules) -> None:
    assert rules_from_statement(_statement(excerpt)) == expected, name


def test_excerpts_cover_every_rule_and_its_traps() -> None:
    rules = [expected for _, _, expected in EXCERPTS]
    assert len(EXCERPTS) >= 40
    assert sum(bool(r.any_case_words) for r in rules) >= 15
    assert sum(r.float_tolerance is not None for r in rules) >= 5
    assert sum(r.several_answers for r in rules) >= 10
    assert sum(r.is_empty() for r in rules) >= 15


# ---------------------------------------------------------------------------------------------
# Rules on constructed statements (the phrasings the real set has, in isolation)


@pytest.mark.parametrize(
    ("sentence", "tolerance", "mode"),
    [
        (
            "Your answer is accepted if its absolute error does not exceed 10^{-9}.",
            1e-9,
            "absolute",
        ),
        ("The relative error of your answer must not exceed 1e-6.", 1e-6, "relative"),
        (
            "The answer is correct if its relative or absolute error is at most 10<sup>-5</sup>.",
            1e-5,
            "absolute_or_relative",
        ),
        (
            "Your answer must differ from the jury's by at most 0.000001.",
            1e-6,
            "absolute_or_relative",
        ),
        ("Print the answer with exactly 6 digits after the decimal point.", None, ""),
        (
            "Print the answer with precision of at least 10 digits after the decimal point.",
            None,
            "",
        ),
        ("It is guaranteed that 10^{-6} ≤ x ≤ 10^6.", None, ""),
    ],
)
def test_tolerance_sentence(sentence: str, tolerance: float | None, mode: str) -> None:
    rules = rules_from_statement(f"Output\n\nPrint one real number.\n\n{sentence}\n")
    assert (rules.float_tolerance, rules.tolerance_mode) == (tolerance, mode)


def test_case_phrase_without_a_named_word_falls_back_to_the_example_answers() -> None:
    text = (
        "Output\n\nPrint the answer. The answer is case-insensitive.\n\n"
        "Example\n\nInput\n\n3\n\nOutput\n\nBerland 7\n"
    )
    assert rules_from_statement(text).any_case_words == ("Berland",)
    no_example = "Output\n\nPrint the answer. The answer is case-insensitive.\n"
    assert rules_from_statement(no_example).any_case_words == ()


def test_quoted_single_letters_are_not_answer_words() -> None:
    text = (
        "Output\n\nPrint \"YES\" and a string of letters 'a' and 'b', or \"NO\". "
        "You can print YES and NO in any case.\n"
    )
    assert rules_from_statement(text).any_case_words == ("NO", "YES")


@pytest.mark.parametrize(
    ("sentence", "several"),
    [
        ("If you cannot find any such pair, print -1.", False),
        ("If you can't find any suitable x, print -1.", False),
        ("You should not output any number twice.", False),
        ("If the answer is not unique, print any of them.", True),
        ("If no answer exists, print -1; otherwise print any of them.", True),
        ("Find any such pair.", True),
        ("You may print the pairs in any order.", True),
        ("Do not print any extra spaces.", False),
    ],
)
def test_several_answers_sentence(sentence: str, several: bool) -> None:
    rules = rules_from_statement(f"Output\n\nPrint the pairs.\n\n{sentence}\n")
    assert rules.several_answers is several


@pytest.mark.parametrize(
    ("sentence", "order"),
    [
        ("You may print the pairs in any order.", "all"),
        ("Names can be printed in any order.", "all"),
        ("In each line, the two names can be printed in any order.", "line"),
        ("You can print the numbers in the lines in any order.", "line"),
        ("In the second line print exactly k integers in any order.", "line"),
        ("Print the indices in any order. If there are several answers, print any.", ""),
        ("The numbers are given in arbitrary order.", ""),
    ],
)
def test_order_free_sentence(sentence: str, order: str) -> None:
    rules = rules_from_statement(f"Output\n\nPrint the pairs.\n\n{sentence}\n")
    assert rules.any_order == order
    assert rules.several_answers or not order


def test_any_order_needs_several_answers() -> None:
    with pytest.raises(ValueError, match="several_answers is false"):
        JudgingRules(any_order="line")
    with pytest.raises(ValueError, match='"line" or "all"'):
        JudgingRules(several_answers=True, any_order="tokens")
    rules = JudgingRules(several_answers=True, any_order="line")
    assert JudgingRules.from_dict(rules.to_dict()) == rules
    assert checker_params("codecontests", rules) == {"any_order": "line"}


@pytest.mark.parametrize(
    ("sentence", "words"),
    [
        ("In any case, the answer is 2.", ()),
        ('In any case, print "YES" or "NO".', ()),
        ('Print "YES" or "NO" in any case.', ("NO", "YES")),
        ('Print "YES" or "NO". Letters are case-sensitive.', ()),
    ],
)
def test_case_sentence(sentence: str, words: tuple[str, ...]) -> None:
    assert rules_from_statement(f"Note\n\n{sentence}\n").any_case_words == words


@given(st.text(max_size=400))
def test_rules_from_statement_never_raises(text: str) -> None:
    rules = rules_from_statement(text)
    assert JudgingRules.from_dict(rules.to_dict()) == rules


# ---------------------------------------------------------------------------------------------
# parse_tolerance

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_SPELLINGS = [
    lambda k: f"10^{{-{k}}}",
    lambda k: f"10^{{ - {k}}}",
    lambda k: f"$10^{{-{k}}}$",
    lambda k: f"10^-{k}",
    lambda k: f"10^(-{k})",
    lambda k: f"10 - {k}",
    lambda k: f"10  - {k}",
    lambda k: f"10-{k}",
    lambda k: f"10−{k}",
    lambda k: f"1e-{k}",
    lambda k: f"1E-{k:02d}",
    lambda k: "0." + "0" * (k - 1) + "1",
    lambda k: f"10<sup>-{k}</sup>",
    lambda k: f"10<sup> - {k}</sup>",
    lambda k: "10⁻" + str(k).translate(_SUPERSCRIPTS),
]


@given(
    st.integers(min_value=1, max_value=18),
    st.sampled_from(range(len(_SPELLINGS))),
    st.sampled_from(["", " ", "  ", "\t", "\n"]),
)
def test_every_spelling_of_ten_to_minus_k_parses(k: int, form: int, pad: str) -> None:
    assert parse_tolerance(pad + _SPELLINGS[form](k) + pad) == 10**-k


@given(st.text(max_size=60))
def test_garbage_never_raises(text: str) -> None:
    value = parse_tolerance(text)
    assert value is None or (math.isfinite(value) and 0 < value < 1)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "10",
        "10^6",
        "10^{6}",
        "1e6",
        "10^-0",
        "0",
        "0.0",
        "1.5",
        "10^{-6",
        "ten",
        "10^{-6}x",
        "10^{-99999999999999999999}",
        "10 - 6 - 2",
        "-10^-6",
    ],
)
def test_not_a_tolerance(text: str) -> None:
    assert parse_tolerance(text) is None


def test_mantissa_and_value() -> None:
    assert parse_tolerance("2.5 · 10^{-7}") == 2.5e-7
    assert parse_tolerance("5e-3") == 5e-3
    assert parse_tolerance("0.0005") == 5e-4


# ---------------------------------------------------------------------------------------------
# truncated_output

# Shapes of cut-off outputs in codefu_easy: 1461_A (one long line), 1462_C (lines), 1536_A
# (the cut right after a line break); the real_data test checks them against the files.
CUT_1461_A = ("abc" * 171)[:511] + "..."
CUT_1462_C = "123456789\n" * 46 + "12345..."
CUT_1536_A_SHAPE = ("1 " * 300)[:506] + "\nYES\n..."


def test_cut_outputs_are_flagged() -> None:
    assert truncated_output(CUT_1461_A)
    assert truncated_output(CUT_1462_C)
    assert truncated_output(CUT_1536_A_SHAPE)


@pytest.mark.parametrize(
    "expected",
    [
        "GOTO Vasilisa.",  # 99_A
        ".\n",  # 474_A
        "." * 101 + "\n",  # 474_A
        "...*\n*...\n..*.\n",  # 14_A
        "\n".join(["....."] * 80),  # a grid of dots without a final newline, cut length
        "1 2 3 ...",
        CUT_1461_A + "\n",  # the dataset's cut never has anything after the dots
        ("abc" * 200)[:600] + "...",  # longer than the cut
        ("abc" * 100)[:300] + "...",  # shorter than the cut
    ],
)
def test_legitimate_dots_are_not_flagged(expected: str) -> None:
    assert not truncated_output(expected)


@given(st.text(max_size=700))
def test_text_ending_in_a_line_break_or_not_in_dots_is_never_cut(text: str) -> None:
    assert not truncated_output(text + "\n")
    if not text.endswith("..."):
        assert not truncated_output(text)


# ---------------------------------------------------------------------------------------------
# JudgingRules: the dict form


def test_empty_rules() -> None:
    assert JudgingRules().is_empty()
    assert JudgingRules.from_dict(None) == JudgingRules() == JudgingRules.from_dict({})
    assert not JudgingRules(several_answers=True).is_empty()


def test_to_dict_is_json_and_reads_back() -> None:
    rules = JudgingRules(
        any_case_words=("YES", "NO", "YES"),
        float_tolerance=1e-6,
        tolerance_mode="absolute_or_relative",
        several_answers=True,
    )
    assert rules.any_case_words == ("NO", "YES")  # sorted, deduplicated
    data = json.loads(json.dumps(rules.to_dict()))
    assert data == {
        "any_case_words": ["NO", "YES"],
        "float_tolerance": 1e-6,
        "tolerance_mode": "absolute_or_relative",
        "several_answers": True,
        "any_order": "",
    }
    assert JudgingRules.from_dict(data) == rules


@given(
    st.lists(st.sampled_from(["YES", "NO", "Yes", "DA", "even", "White"]), max_size=4),
    st.one_of(st.none(), st.integers(min_value=1, max_value=18)),
    st.sampled_from(["absolute_or_relative", "absolute", "relative"]),
    st.booleans(),
)
def test_dict_round_trip(words: list[str], k: int | None, mode: str, several: bool) -> None:
    rules = JudgingRules(
        any_case_words=tuple(words),
        float_tolerance=None if k is None else 10**-k,
        tolerance_mode="" if k is None else mode,
        several_answers=several,
    )
    assert JudgingRules.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"any_case_word": ["YES"]}, "any_case_word"),
        ({"any_case_words": "YES"}, "any_case_words"),
        ({"any_case_words": ["YES", 1]}, "any_case_words"),
        ({"any_case_words": [" YES"]}, "any_case_words"),
        ({"float_tolerance": "1e-6", "tolerance_mode": "absolute"}, "float_tolerance"),
        ({"float_tolerance": 2.0, "tolerance_mode": "absolute"}, "float_tolerance"),
        ({"float_tolerance": True, "tolerance_mode": "absolute"}, "float_tolerance"),
        ({"float_tolerance": 1e-6, "tolerance_mode": "abs"}, "tolerance_mode"),
        ({"float_tolerance": 1e-6}, "tolerance_mode"),
        ({"tolerance_mode": "absolute"}, "tolerance_mode"),
        ({"several_answers": "yes"}, "several_answers"),
    ],
)
def test_from_dict_names_the_bad_key(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=key):
        JudgingRules.from_dict(data)


# ---------------------------------------------------------------------------------------------
# All 840 statements of codefu_easy

# Hand-verified counts. Case: every sentence of the 840 statements with case / register /
# upper / lower / sensitive / capital and print / output / answer was read; 66 allow any case,
# each detected with the words named (50 NO/YES, 10 No/Yes, DA/NET, Black/White,
# Finite/Infinite, EASY/HARD, even/odd, and NO for the interactive 1505_A). Tolerance: every
# statement mentioning error / precision / absolute / relative / decimal / 10^-k (60) was read;
# 9 state a bound, all "absolute or relative", 4 at 10^-4 and 5 at 10^-6. Several answers:
# the sentence behind each of the 120 detected was read, and for the 720 others every
# sentence with any / multiple / several / order / unique / accept; none was missed (and 6
# of the 120 say only that the output may come in any order). Truncated outputs: every
# expected output containing "..." (80) was read; 17 are cut, in 7 problems.
REAL_COUNTS = {"any_case": 66, "tolerance": 9, "several_answers": 120, "any_rule": 190}
# The 6 whose statement frees only the order, and how (the sentences were read).
REAL_ANY_ORDER = {
    "1056_A. Determine Line": "all",
    "334_A. Candy Bags": "line",
    "306_A. Candies": "all",
    "987_A. Infinity Gauntlet": "all",
    "1015_A. Points in Segments": "line",
    "776_A. A Serial Killer": "line",
}
REAL_TOLERANCES = {
    "157_B. Trace": 1e-4,
    "200_B. Drinks": 1e-4,
    "591_A. Wizards' Duel": 1e-4,
    "1293_B. JOE is on TV!": 1e-4,
    "706_A. Beru-taxi": 1e-6,
    "624_A. Save Luke": 1e-6,
    "127_A. Wasted Time": 1e-6,
    "1199_B. Water Lily": 1e-6,
    "919_A. Supermarket": 1e-6,
}
REAL_CUT = {
    "1462_C. Unique Number": 2,
    "1461_A. String Generation": 9,
    "1536_A. Omkar and Bad Story": 2,
    "1467_A. Wizard of Orz": 2,
    "1493_A. Anti-knapsack": 1,
    "1454_A. Special Permutation": 1,
}


@pytest.mark.real_data
def test_all_real_statements() -> None:
    root = os.environ.get("CODEFU_REAL_DATA")
    if not root:
        pytest.skip(
            "CODEFU_REAL_DATA is unset: set it to a folder holding "
            "codefu_easy/{train,test}.parquet (real CodeContests problems) to run this"
        )
    directory = Path(root) / "codefu_easy"
    if not directory.is_dir():
        pytest.skip(f"{directory} does not exist")
    import pyarrow.parquet as pq

    rows = [
        row
        for split in ("train", "test")
        for row in pq.read_table(directory / f"{split}.parquet").to_pylist()
    ]
    assert len(rows) == 840
    counts = dict.fromkeys(REAL_COUNTS, 0)
    tolerances: dict[str, float] = {}
    words: dict[tuple[str, ...], int] = {}
    cut: dict[str, int] = {}
    orders: dict[str, str] = {}
    for row in rows:
        truth = row["reward_model"]["ground_truth"]
        rules = rules_from_statement(row["prompt"][0]["content"].split("Problem:", 1)[1])
        counts["any_case"] += bool(rules.any_case_words)
        counts["tolerance"] += rules.float_tolerance is not None
        counts["several_answers"] += rules.several_answers
        counts["any_rule"] += not rules.is_empty()
        if rules.any_order:
            orders[truth["name"]] = rules.any_order
        if rules.any_case_words:
            words[rules.any_case_words] = words.get(rules.any_case_words, 0) + 1
        if rules.float_tolerance is not None:
            assert rules.tolerance_mode == "absolute_or_relative", truth["name"]
            tolerances[truth["name"]] = rules.float_tolerance
        outputs = truth["public_tests"]["output"] + truth["private_tests"]["output"]
        flagged = sum(truncated_output(out) for out in outputs)
        if flagged:
            cut[truth["name"]] = flagged
        if truth["name"].startswith("1461_A."):
            assert CUT_1461_A in outputs
        if truth["name"].startswith("1462_C."):
            assert CUT_1462_C in outputs
    assert counts == REAL_COUNTS
    assert tolerances == REAL_TOLERANCES
    assert words[("NO", "YES")] == 50 and words[("No", "Yes")] == 10
    assert words[("DA", "NET")] == words[("even", "odd")] == words[("NO",)] == 1
    assert cut == REAL_CUT
    assert orders == REAL_ANY_ORDER
