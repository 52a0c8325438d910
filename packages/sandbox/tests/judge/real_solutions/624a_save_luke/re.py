import sys

d, length, v1, v2 = map(int, input().split())
sys.exit(3)  # a non-zero exit status
