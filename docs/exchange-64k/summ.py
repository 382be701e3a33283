import sys,collections,statistics as st
# lines: round lib knob pat=ns ...
data=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)<4: continue
    r,lib,k=f[:3]
    for kv in f[3:]:
        p,v=kv.split('='); data[(lib,k,p)][r]=float(v)
libs=sorted({k[0] for k in data}); knobs=[]; pats=[]
for (lib,k,p) in data:
    if k not in knobs: knobs.append(k)
    if p not in pats: pats.append(p)
for p in pats:
  for k in knobs:
    if k=='zero': continue
    row=[]
    for lib in libs:
        z=data.get((lib,'zero',p),{}); x=data.get((lib,k,p),{})
        diffs=[x[r]-z[r] for r in x if r in z]
        row.append(f"{lib}: {st.median(diffs):+8.0f} ({' '.join(f'{d:+.0f}' for d in diffs)})" if diffs else f"{lib}: -")
    print(f"{p:16s} {k:30s} "+" | ".join(row))
