package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }

// callTable prints one tools/call scenario: a row per target and
// concurrency, then the ratios, and judges the targets on "small".
func (e *env) callTable(sc scenario, rows map[string]*row) {
	w := e.out
	fmt.Fprintf(w, "## %s: %s\n\n", sc.name, sc.what)
	fmt.Fprintf(w, "| target | c | req/s | (min–max) | p50 ms | p99 ms | proxy CPU µs/req | proxy kernel %% | proxy syscalls / wake-ups per req | upstream CPU µs/req | server CPU %% | generator CPU %% | proxy peak RSS | errors |\n")
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range e.cfg.conc {
		for _, t := range targetNames {
			r := rows[t+"/"+fmt.Sprint(c)]
			if r == nil {
				continue // sdk: plain reads only
			}
			e.judgeErrors(sc.name, r)
			reqs, errs, _, wall, px, up, gen := r.total()
			p := r.percentiles(0.5, 0.99)
			lo, hi := r.spread()
			pk, _ := r.peak()
			proxy, kernel, counts, peak := "–", "–", "–", "–"
			if t != "direct" {
				proxy = fmt.Sprintf("%.1f", perReq(px, reqs))
				sc, wk, k := r.proxyCounts()
				counts = fmt.Sprintf("%.1f / %.2f", sc, wk)
				if !math.IsNaN(k) {
					kernel = fmt.Sprintf("%.0f", 100*k)
				}
				peak = mib(pk)
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %.0f–%.0f | %s | %s | %s | %s | %s | %.1f | %.0f | %.0f | %s | %d |\n",
				t, c, r.rps(), lo, hi, ms(p[0]), ms(p[1]), proxy, kernel, counts, perReq(up, reqs),
				100*(px+up).Seconds()/wall.Seconds(), 100*gen.Seconds()/wall.Seconds(), peak, errs)
		}
	}
	fmt.Fprintf(w, "\nRatios, cached tokens / fresh tokens (server CPU = proxy + upstream per request):\n\n")
	fmt.Fprintf(w, "| c | req/s gateway/direct | req/s gateway/hop | proxy CPU gateway/hop | proxy user CPU gateway/hop | server CPU gateway/direct | server CPU gateway/hop | p99 added over direct (ms) |\n")
	fmt.Fprintf(w, "|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range e.cfg.conc {
		get := func(t string) *row { return rows[t+"/"+fmt.Sprint(c)] }
		d, h := get("direct"), get("hop")
		var cells [7][2]string
		for i, g := range []*row{get("gateway"), get("gateway-fresh")} {
			cells[0][i] = ratio(g.rps(), d.rps())
			cells[1][i] = ratio(g.rps(), h.rps())
			cells[2][i] = ratio(g.proxyCPU(), h.proxyCPU())
			cells[3][i] = ratio(g.proxyUserCPU(), h.proxyUserCPU())
			cells[4][i] = ratio(g.proxyCPU()+g.upCPU(), d.upCPU())
			cells[5][i] = ratio(g.proxyCPU()+g.upCPU(), h.proxyCPU()+h.upCPU())
			cells[6][i] = ms(g.percentiles(0.99)[0] - d.percentiles(0.99)[0])
		}
		fmt.Fprintf(w, "| %d |", c)
		for _, cell := range cells {
			fmt.Fprintf(w, " %s / %s |", cell[0], cell[1])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if rows["sdk/"+fmt.Sprint(e.cfg.conc[0])] != nil {
		fmt.Fprintf(w, "Against the hand-written Go SDK server (sdk), cached tokens for the gateway, same run:\n\n")
		fmt.Fprintf(w, "| c | req/s sdk/hop | proxy CPU sdk/hop | req/s gateway/sdk | proxy CPU gateway/sdk | p99 ms sdk / gateway |\n|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range e.cfg.conc {
			get := func(t string) *row { return rows[t+"/"+fmt.Sprint(c)] }
			s, h, g := get("sdk"), get("hop"), get("gateway")
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s / %s |\n", c, ratio(s.rps(), h.rps()), ratio(s.proxyCPU(), h.proxyCPU()),
				ratio(g.rps(), s.rps()), ratio(g.proxyCPU(), s.proxyCPU()), ms(s.percentiles(0.99)[0]), ms(g.percentiles(0.99)[0]))
		}
		fmt.Fprintln(w)
	}
	if e.hopFat != nil {
		fmt.Fprintf(w, "The same hop in a binary of the gateway's size (-hop-fat-bin, hop-fat) against the harness's own, same run:\n\n")
		fmt.Fprintf(w, "| c | req/s hop-fat/hop | proxy CPU hop-fat/hop | proxy user CPU hop-fat/hop |\n|--:|--:|--:|--:|\n")
		for _, c := range e.cfg.conc {
			get := func(t string) *row { return rows[t+"/"+fmt.Sprint(c)] }
			f, h := get("hop-fat"), get("hop")
			fmt.Fprintf(w, "| %d | %s | %s | %s |\n", c, ratio(f.rps(), h.rps()), ratio(f.proxyCPU(), h.proxyCPU()), ratio(f.proxyUserCPU(), h.proxyUserCPU()))
		}
		fmt.Fprintln(w)
	}
	if e.base != nil {
		fmt.Fprintf(w, "This build against -baseline-bin (gateway-base), cached tokens / fresh tokens, same run:\n\n")
		fmt.Fprintf(w, "| c | req/s gateway/gateway-base | proxy CPU gateway/gateway-base | proxy user CPU gateway/gateway-base |\n|--:|--:|--:|--:|\n")
		for _, c := range e.cfg.conc {
			get := func(t string) *row { return rows[t+"/"+fmt.Sprint(c)] }
			g, b, gf, bf := get("gateway"), get("gateway-base"), get("gateway-fresh"), get("gateway-base-fresh")
			fresh := [3]string{"–", "–", "–"}
			if gf != nil && bf != nil {
				fresh = [3]string{ratio(gf.rps(), bf.rps()), ratio(gf.proxyCPU(), bf.proxyCPU()), ratio(gf.proxyUserCPU(), bf.proxyUserCPU())}
			}
			fmt.Fprintf(w, "| %d | %s / %s | %s / %s | %s / %s |\n", c, ratio(g.rps(), b.rps()), fresh[0], ratio(g.proxyCPU(), b.proxyCPU()), fresh[1], ratio(g.proxyUserCPU(), b.proxyUserCPU()), fresh[2])
		}
		fmt.Fprintln(w)
	}
	if sc.name == "small" {
		e.judgeSmall(rows)
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// judgeSmall states the small-read targets against this run.
func (e *env) judgeSmall(rows map[string]*row) {
	verdict := func(ok bool) string {
		if ok {
			return "MET"
		}
		return "MISSED"
	}
	var cpuParts []string
	cpuOK := true
	for _, c := range e.cfg.conc {
		g, h := rows["gateway/"+fmt.Sprint(c)], rows["hop/"+fmt.Sprint(c)]
		f := rows["gateway-fresh/"+fmt.Sprint(c)]
		x, xf := g.proxyCPU()/h.proxyCPU(), f.proxyCPU()/h.proxyCPU()
		cpuOK = cpuOK && x <= 1.25
		cpuParts = append(cpuParts, fmt.Sprintf("c=%d %.1f vs %.1f µs = %.2fx (fresh %.2fx)", c, g.proxyCPU(), h.proxyCPU(), x, xf))
	}
	e.targets = append(e.targets, fmt.Sprintf("small read, gateway CPU per call <= 1.25x the hop's: %s: %s", strings.Join(cpuParts, "; "), verdict(cpuOK)))
	var tpParts []string
	tpOK := true
	for _, c := range e.cfg.conc {
		g, h := rows["gateway/"+fmt.Sprint(c)], rows["hop/"+fmt.Sprint(c)]
		x := g.rps() / h.rps()
		tpOK = tpOK && x >= 0.8
		tpParts = append(tpParts, fmt.Sprintf("c=%d %.0f vs %.0f req/s = %.2fx", c, g.rps(), h.rps(), x))
	}
	note := ""
	if !e.cfg.pin {
		note = " (not pinned: the target assumes pinning)"
	}
	e.targets = append(e.targets, fmt.Sprintf("small read, gateway throughput >= 0.8x the hop's at every concurrency%s: %s: %s", note, strings.Join(tpParts, "; "), verdict(tpOK)))
	if g, d := rows["gateway/1"], rows["direct/1"]; g != nil && d != nil {
		added := g.percentiles(0.99)[0] - d.percentiles(0.99)[0]
		f := rows["gateway-fresh/1"].percentiles(0.99)[0] - d.percentiles(0.99)[0]
		e.targets = append(e.targets, fmt.Sprintf("small read, p99 added over direct at c=1 <= 1 ms: %s ms (fresh %s ms): %s", ms(added), ms(f), verdict(added <= time.Millisecond)))
	}
}

// listTable prints the tools/list scenario and judges its target.
func (e *env) listTable(rows []*row, ready time.Duration, idle snapshot, want []int) {
	w := e.out
	total, pages := 0, 0
	for _, n := range want {
		total += n
		pages += (n + 99) / 100
	}
	fmt.Fprintf(w, "## tools/list: %d generated tools behind %d gates, filtered per caller, every cursor followed\n\n", e.cfg.tools, len(listGates))
	fmt.Fprintf(w, "Callers see %v tools (%d pages of 100 for one walk of each); one request is one page. The gateway was ready %s after start; idle: %s.\n\n",
		want, pages, ready.Round(time.Millisecond), idle)
	fmt.Fprintf(w, "| c | pages/s | tools listed/s | p50 ms | p99 ms | gateway CPU µs/page | gateway CPU µs/tool listed | generator CPU %% | peak RSS | errors |\n")
	fmt.Fprintf(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var parts []string
	ok := true
	for _, r := range rows {
		e.judgeErrors("tools-list", r)
		reqs, errs, items, wall, px, _, gen := r.total()
		p := r.percentiles(0.5, 0.99)
		pk, _ := r.peak()
		perTool := perReq(px, items)
		ok = ok && perTool <= 0.3
		parts = append(parts, fmt.Sprintf("c=%d %.2f µs", r.conc, perTool))
		fmt.Fprintf(w, "| %d | %.0f | %.0f | %s | %s | %.1f | %.3f | %.0f | %s | %d |\n",
			r.conc, r.rps(), float64(items)/wall.Seconds(), ms(p[0]), ms(p[1]), perReq(px, reqs), perTool,
			100*gen.Seconds()/wall.Seconds(), mib(pk), errs)
	}
	fmt.Fprintln(w)
	v := "MET"
	if !ok {
		v = "MISSED"
	}
	e.targets = append(e.targets, fmt.Sprintf("tools/list over %d tools, gateway CPU per tool listed <= 0.3 µs: %s: %s", e.cfg.tools, strings.Join(parts, "; "), v))
}

func (e *env) summary() {
	fmt.Fprintf(e.out, "## Targets, judged on this run; nothing is enforced\n\n")
	for _, t := range e.targets {
		fmt.Fprintf(e.out, "- %s\n", t)
	}
	fmt.Fprintln(e.out)
}
