import LinkRelay
print("placeholder")
