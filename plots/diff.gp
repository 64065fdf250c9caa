# diff.gp - analyze plot diff: the biggest increases (top) and decreases
# (bottom) from the base run to the new one, in points of base's total, each
# with its margin of sampling noise as an error bar; changes within the noise
# are drawn pale.
#
# From analyze: program (new's), trace ("BASE -> NEW"), text, xlabel, xmax,
# confidence (%), exact (1: no noise), n and names[] (bar order).
# Data: diff.dat: rank, change, margin, significant (1/0), base %, new %.
set title sprintf("changes of %s\n%s", program, trace) noenhanced
set xrange [-xmax:xmax]
set yrange [n + 0.5:0.5]
set ytics scale 0 noenhanced
set ytics ()
do for [i = 1:n] {
	set ytics add (names[i] i)
}
set xlabel xlabel noenhanced
set grid xtics
set arrow from 0, graph 0 to 0, graph 1 nohead lc rgb '#333333' front
set key outside right top vertical Left reverse noenhanced samplen 2
set style fill solid 0.9 border rgb '#555555'
# A bar of one kind only: the others' x is undefined, which skips them.
pick(up, sig) = ((up ? $2 > 0 : $2 < 0) && $4 == sig) ? 0 : 1/0
noise = exact ? 'exact counts: no sampling noise' : sprintf('noise, %g%% confidence', confidence)
if (text) {
	set style fill empty
	plot 'diff.dat' using (0):1:(0):2:($1 - 0.3):($1 + 0.3) with boxxyerror title 'change', \
		'' using 2:1:($2 - $3):($2 + $3) with xerrorbars pt 0 title noise
} else {
	plot 'diff.dat' using (pick(1, 1)):1:(0):2:($1 - 0.35):($1 + 0.35) with boxxyerror lc rgb '#e15759' title 'more', \
		'' using (pick(0, 1)):1:(0):2:($1 - 0.35):($1 + 0.35) with boxxyerror lc rgb '#4e79a7' title 'less', \
		'' using (pick(1, 0)):1:(0):2:($1 - 0.35):($1 + 0.35) with boxxyerror lc rgb '#f4b6b7' title 'more, within noise', \
		'' using (pick(0, 0)):1:(0):2:($1 - 0.35):($1 + 0.35) with boxxyerror lc rgb '#b8cce0' title 'less, within noise', \
		'' using 2:1:($2 - $3):($2 + $3) with xerrorbars pt -1 lc rgb '#222222' lw 1.5 title noise
}
