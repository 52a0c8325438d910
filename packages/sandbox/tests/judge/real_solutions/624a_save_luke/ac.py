d, length, v1, v2 = map(int, input().split())
print("%.15f" % ((length - d) / (v1 + v2)))
quit()
