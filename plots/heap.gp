# heap.gp - analyze plot heap: live heap bytes over time (allocations minus
# frees so far), the band from the lowest to the highest value within each
# bin, the peak marked, and what is still live at the end.
#
# From analyze: program, trace, text, ylabel, yscale (bytes -> y), duration
# (s), binwidth (s), peak (bytes), peak_time (s), peak_text, end_bytes,
# end_text, end_objects (-1 when unknown).
# Data: heap.dat: a bin's end (s; the first row is the start), live bytes
# then, the lowest and highest within the bin.
set title sprintf("live heap of %s\n%s", program, trace) noenhanced
set xrange [0:duration]
set yrange [0:(peak > 0 ? peak * yscale * 1.15 : 1)]
set xlabel 'seconds since the start'
set ylabel ylabel noenhanced
set grid
set key outside right top vertical Left reverse noenhanced samplen 2
set style fill solid 0.6 noborder
set label 1 sprintf('peak %s at %.3f s', peak_text, peak_time) at peak_time, peak * yscale \
	offset 1,0.8 front noenhanced
if (!text) {
	set label 1 point pt 7 ps 1.6 lc rgb '#e15759'
}
still = end_objects >= 0 ? sprintf('still live at the end: %s in %d blocks', end_text, end_objects) \
	: sprintf('still live at the end: %s', end_text)
set label 2 still at graph 0.98, first end_bytes * yscale right offset 0,1 front noenhanced
set arrow 2 from graph 0.985, first end_bytes * yscale to graph 1, first end_bytes * yscale lc rgb '#e15759' lw 2 front
# fsteps: each bin's value drawn over the bin, from the previous row's time.
if (text) {
	plot 'heap.dat' using 1:($2 * yscale) with fsteps title 'live bytes'
} else {
	plot 'heap.dat' every ::1 using ($1 - binwidth / 2):($2 * yscale):($1 - binwidth):1:($3 * yscale):($4 * yscale) \
			with boxxyerror fs solid 0.5 noborder lc rgb '#a0cbe8' title 'lowest to highest within a bin', \
		'' using 1:($2 * yscale) with fsteps lc rgb '#4e79a7' lw 2 title 'live bytes'
}
