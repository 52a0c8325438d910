n = int(input())
lucky = [v for v in range(1, 1001) if set(str(v)) <= {"4", "7"}]
print("YES" if any(n % v == 0 for v in lucky) else "NO")
