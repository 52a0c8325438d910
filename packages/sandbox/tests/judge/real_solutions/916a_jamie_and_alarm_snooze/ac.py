def lucky(t):
    h, m = divmod(t, 60)
    return "7" in f"{h:02d}{m:02d}"


x, hh, mm = map(int, open(0).read().split())
t, y = hh * 60 + mm, 0
if lucky(t):
    print(0)
    exit()
while not lucky(t):
    t = (t - x) % 1440
    y += 1
print(y)
