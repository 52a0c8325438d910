for row in range(5):
    cells = input().split()
    if "1" in cells:
        print(abs(row - 2) + abs(cells.index("1") - 2))
