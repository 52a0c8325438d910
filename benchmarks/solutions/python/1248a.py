t = int(input())
for _ in range(t):
    input()
    p = list(map(int, input().split()))
    input()
    q = list(map(int, input().split()))
    odd_p = sum(v % 2 for v in p)
    odd_q = sum(v % 2 for v in q)
    print(odd_p * odd_q + (len(p) - odd_p) * (len(q) - odd_q))
