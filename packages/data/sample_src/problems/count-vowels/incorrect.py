# Uses the English vowels only and forgets that y is a vowel in Vowelia.
s = input().strip()
print(sum(c in "aeiou" for c in s))
