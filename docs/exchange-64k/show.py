import glob,sys
L=[]
fs=sorted(glob.glob(sys.argv[1]+'/trace.*'))
for f,r in zip(fs,'AB'):
    for l in open(f):
        t,k,a,b,c=map(int,l.split()); L.append((t,r,k,a,b,c))
L.sort()
n=int(sys.argv[2]) if len(sys.argv)>2 else 80
seg=L[-n:]
t0=seg[0][0]
for t,r,k,a,b,c in seg:
    ind = '' if r=='A' else ' '*40
    if k==5: s=f"pacer called={a-t0} wait={t-a}"
    elif k==1: s=f"seen {'RECV' if a&0x400 else 'SEND'} len={b} hold={c}"
    elif k==9: s=f"  polling={a} since_drained={b} readstart={c-t0}"
    elif k==8: s=f"longread {a} rc={b if b<1e9 else -1} polling={c}"
    elif k==3: s=f"release {'RECV' if a&0x400 else 'SEND'} len={b}"
    elif k==2: s=f"spinahead {a}"
    elif k==4: s=f"sendcompl"
    elif k==6: s=f"posted {a} at={b-t0 if b else 0}"
    else: s=f"ret out={a} in={b if b<1e9 else -1} held={c}"
    print(f"{t-t0:8d} {ind}{s}")
