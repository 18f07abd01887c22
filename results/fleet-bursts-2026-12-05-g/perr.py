# ruff: noqa  -- a quick analysis script, kept as it ran
# prediction error of one gateway log dir, by load_self and backend; ttft vs decode split
import glob, json, statistics as st, sys, collections as C
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + "/gateway-*.log")):
        rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
        rs = [r for r in rs if r.get("status") == "200" and r.get("predicted_s") is not None]
        print("==", f.split('/')[-1], len(rs), "median err", round(st.median(abs(r['predicted_s']-r['observed_s'])/r['observed_s'] for r in rs), 3))
        g = C.defaultdict(list)
        for r in rs:
            L = r['load_self']; b = 0 if L < 1 else 1 if L < 3 else 2 if L < 6 else 3 if L < 10 else 4
            g[(r['backend'][:4], b)].append(r)
        print("role load   n  obs   pred  bias  ttft_o ttft_p dec_o dec_p")
        for k in sorted(g):
            x = g[k]
            o = st.mean(r['observed_s'] for r in x); p = st.mean(r['predicted_s'] for r in x)
            to = st.mean(r['ttft_s'] for r in x); tp = st.mean(r['predicted_ttft_s'] for r in x)
            print(f"{k[0]} {['<1','1-3','3-6','6-10','10+'][k[1]]:>5} {len(x):4d} {o:.3f} {p:.3f} {p/o:5.2f} {to:.3f} {tp:.3f} {o-to:.3f} {p-tp:.3f}")
