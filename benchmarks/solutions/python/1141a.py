n, m = map(int, input().split())
if m % n:
    print(-1)
else:
    q, moves = m // n, 0
    for f in (2, 3):
        while q % f == 0:
            q //= f
            moves += 1
    print(moves if q == 1 else -1)
