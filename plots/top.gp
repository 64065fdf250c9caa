# top.gp - analyze plot top: horizontal bars of the top functions (ranked
# by self), inclusive (light) and self (dark), each with its shares.
#
# From analyze: program, trace, text, xlabel, xscale (data value -> x),
# total (the value of every sample), n and names[] (rank order).
# Data: top.dat: rank, self, inclusive (raw values).
set title sprintf("top functions of %s\n%s", program, trace) noenhanced
stats 'top.dat' using 3 nooutput
set xrange [0:STATS_max * xscale * 1.45]
set yrange [n + 0.5:0.5]
set ytics scale 0 noenhanced
set ytics ()
do for [i = 1:n] {
	set ytics add (names[i] i)
}
set xlabel xlabel noenhanced
set grid xtics
set key outside right top vertical Left reverse noenhanced samplen 2
set style fill solid 0.9 border rgb '#555555'
share(x) = total != 0 ? 100.0 * x / total : 0
if (text) {
	set style fill empty
	plot 'top.dat' using (0):1:(0):($3 * xscale):($1 - 0.38):($1 + 0.38) with boxxyerror title 'inclusive', \
		'' using (0):1:(0):($2 * xscale):($1 - 0.15):($1 + 0.15) with boxxyerror title 'self'
} else {
	plot 'top.dat' using (0):1:(0):($3 * xscale):($1 - 0.38):($1 + 0.38) with boxxyerror \
			lc rgb '#a0cbe8' title 'inclusive', \
		'' using (0):1:(0):($2 * xscale):($1 - 0.22):($1 + 0.22) with boxxyerror \
			lc rgb '#4e79a7' title 'self', \
		'' using ($3 * xscale):1:(sprintf(' %.1f%% self, %.1f%% inclusive', share($2), share($3))) \
			with labels left font ',9' notitle
}
