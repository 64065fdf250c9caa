# rate.gp - analyze plot rate: allocations (or bytes allocated) per second
# over the run, and frees per second when the trace says them.
#
# From analyze: program, trace, text, ylabel, yscale (value per bin -> per
# second), duration (s), binwidth (s), has_frees, what ("blocks" or "bytes").
# Data: rate.dat: the bin's middle (s), allocated and freed in the bin.
set title sprintf("allocation rate of %s\n%s", program, trace) noenhanced
set xrange [0:duration]
set yrange [0:*]
set xlabel 'seconds since the start'
set ylabel ylabel noenhanced
set grid
set key outside right top vertical Left reverse noenhanced samplen 2
set boxwidth binwidth absolute
if (has_frees) {
	plot 'rate.dat' using 1:($2 * yscale) with boxes fs solid 0.6 noborder lc rgb '#4e79a7' \
			title sprintf('%s allocated', what), \
		'' using 1:($3 * yscale) with boxes fs empty lc rgb '#e15759' lw 1.5 title sprintf('%s freed', what)
} else {
	plot 'rate.dat' using 1:($2 * yscale) with boxes fs solid 0.6 noborder lc rgb '#4e79a7' \
		title sprintf('%s allocated', what)
}
