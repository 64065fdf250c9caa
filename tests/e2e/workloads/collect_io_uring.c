/*
 * collect_io_uring - a program whose read waits in an io_uring kernel
 * worker, for tests/e2e/collect_wall.sh: io_uring_setup and a READ of an
 * empty pipe submitted with IOSQE_ASYNC, so the kernel starts a worker
 * thread in this process (an "iou-wrk-TID" task) that blocks on the pipe;
 * main burns 0.3 s of CPU, writes one byte, reaps the completion and exits.
 * The worker is the kernel's, not a thread of the program: wall mode must not
 * list it. Raw system calls: no liburing.
 */
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_util.h"

int main(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	int fds[2];
	if (ring < 0 || pipe(fds) < 0) {
		perror("collect_io_uring: io_uring_setup");
		return 3; /* the test skips: io_uring not available here */
	}
	size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	unsigned char *sq = mmap(NULL, sq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
				 IORING_OFF_SQ_RING);
	unsigned char *cq = mmap(NULL, cq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
				 IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return 1;
	char byte;
	memset(&sqes[0], 0, sizeof sqes[0]);
	sqes[0].opcode = IORING_OP_READ;
	sqes[0].flags = IOSQE_ASYNC; /* a worker thread, whatever the file */
	sqes[0].fd = fds[0];
	sqes[0].addr = (uint64_t)(uintptr_t)&byte;
	sqes[0].len = 1;
	uint32_t *tail = (uint32_t *)(sq + p.sq_off.tail), *array = (uint32_t *)(sq + p.sq_off.array);
	array[*tail & *(uint32_t *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 0, 0, NULL, 0) != 1)
		return 1;
	burn_cpu(0.3);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	if (syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return 1;
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	printf("read=%d\n", cqe[0].res);
	return cqe[0].res == 1 ? 0 : 1;
}
