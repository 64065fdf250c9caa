# timeline.gp - analyze plot timeline: the plotted value per second of the
# run, stacked by thread (top panel) and by the function running, the top
# ones coloured (bottom panel), with the run's phases (spans where one
# function dominates) marked by dashed lines.
#
# From analyze: program, trace, text (1 on the text terminal), ylabel,
# yscale (data value -> y), binwidth (s), duration (s), nthreads and
# thread_names[], nfunctions and function_names[] (the last is "other"),
# nphases, phase_start[] (s) and phase_name[].
# Data: timeline-threads.dat and timeline-functions.dat: the bin's middle
# (s since the start), then one column per series, raw values per bin (each
# sample spread over the time it stands for: a thread fills at most a bin).
colors = '#4e79a7 #f28e2b #e15759 #76b7b2 #59a14f #edc948 #b07aa1 #ff9da7 #9c755f #86bcb6 #d37295 #fabfd2'
color(i, n, named) = (i == n && !named) ? '#bab0ac' : word(colors, (i - 1) % 12 + 1)
set multiplot layout 2,1 title sprintf("timeline of %s\n%s", program, trace) noenhanced
set xrange [0:duration]
set yrange [0:*]
set ylabel ylabel noenhanced
set grid ytics
set key outside right top vertical Left reverse noenhanced samplen 2
set style fill solid 0.9 noborder
set boxwidth binwidth absolute
set lmargin 12
set rmargin 34
# Stacked: series i is drawn up to the sum of series 1..i, from the top one
# down, each over the ones below it.
stacked(i) = (sum [c = 2:i + 1] column(c)) * yscale
set title 'by thread' noenhanced
if (text) {
	plot for [i = nthreads:1:-1] 'timeline-threads.dat' using 1:(stacked(i)) with lines title thread_names[i]
} else {
	plot for [i = nthreads:1:-1] 'timeline-threads.dat' using 1:(stacked(i)) with boxes \
		lc rgb color(i, nthreads, thread_names[i] ne 'other threads') title thread_names[i]
}
set title 'by function running (self), phases dashed' noenhanced
set xlabel 'seconds since the start'
do for [i = 2:nphases] {
	set arrow i from phase_start[i], graph 0 to phase_start[i], graph 1 nohead dt 2 lc rgb '#333333' front
}
if (!text) {
	do for [i = 1:nphases] {
		set label i phase_name[i][1:24] at phase_start[i], graph 1 left offset 0.5,-0.8 font ',9' front noenhanced
	}
}
if (text) {
	plot for [i = nfunctions:1:-1] 'timeline-functions.dat' using 1:(stacked(i)) with lines title function_names[i]
} else {
	plot for [i = nfunctions:1:-1] 'timeline-functions.dat' using 1:(stacked(i)) with boxes \
		lc rgb color(i, nfunctions, 0) title function_names[i]
}
unset multiplot
