// Nothing: see package.json.
