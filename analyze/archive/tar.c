/*
 * tar.c - the tar writer (see tar.h). A ustar header holds a name of 100
 * bytes, or 255 split at a '/' into prefix and name; longer names go in a
 * GNU "././@LongLink" member first, which GNU tar, bsdtar and busybox read.
 */
#include "tar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 512

static void put(struct tar_writer *t, const void *p, size_t n)
{
	if (!t->error && n && fwrite(p, 1, n, t->out) != n)
		t->error = errno ? errno : EIO;
}

static void pad(struct tar_writer *t, uint64_t size)
{
	static const char zeros[BLOCK];
	if (size % BLOCK)
		put(t, zeros, BLOCK - size % BLOCK);
}

/* v as digits octal digits and a NUL at field (the caller keeps v below 8^digits). */
static void octal(unsigned char *field, unsigned digits, uint64_t v)
{
	field[digits] = '\0';
	for (unsigned i = digits; i-- > 0; v >>= 3)
		field[i] = (unsigned char)('0' + (v & 7));
}

/* A header block for name (already fitting) of size bytes. */
static void header(struct tar_writer *t, const char *prefix, const char *name, uint64_t size,
		   char type, time_t mtime)
{
	unsigned char h[BLOCK];
	memset(h, 0, sizeof(h));
	snprintf((char *)h, 100, "%s", name);
	octal(h + 100, 7, 0644);
	octal(h + 108, 7, 0);
	octal(h + 116, 7, 0);
	octal(h + 124, 11, size);
	octal(h + 136, 11, mtime > 0 ? (uint64_t)mtime & 077777777777ull : 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	snprintf((char *)h + 345, 155, "%s", prefix);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < BLOCK; i++)
		sum += h[i];
	octal(h + 148, 6, sum);
	h[155] = ' ';
	put(t, h, BLOCK);
}

/* The header(s) of member: ustar with a prefix when it fits, else GNU's. */
static void member_header(struct tar_writer *t, const char *member, uint64_t size, time_t mtime)
{
	size_t n = strlen(member);
	if (n < 100) {
		header(t, "", member, size, '0', mtime);
		return;
	}
	for (const char *slash = strchr(member, '/'); slash; slash = strchr(slash + 1, '/')) {
		size_t prefix = (size_t)(slash - member);
		if (prefix < 155 && n - prefix - 1 < 100 && n - prefix - 1 > 0) {
			char pre[156];
			memcpy(pre, member, prefix);
			pre[prefix] = '\0';
			header(t, pre, slash + 1, size, '0', mtime);
			return;
		}
	}
	header(t, "", "././@LongLink", n + 1, 'L', 0);
	put(t, member, n + 1);
	pad(t, n + 1);
	char cut[100];
	snprintf(cut, sizeof(cut), "%s", member);
	header(t, "", cut, size, '0', mtime);
}

int tar_add_data(struct tar_writer *t, const char *member, const void *data, size_t len)
{
	member_header(t, member, len, time(NULL));
	put(t, data, len);
	pad(t, len);
	return t->error ? -1 : 0;
}

int tar_add_file(struct tar_writer *t, const char *member, const char *path, char *why,
		 size_t why_len)
{
	why[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s", fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size >= (1ull << 33)) {
		snprintf(why, why_len, "larger than the 8 GiB a tar member holds");
		close(fd);
		return -1;
	}
	member_header(t, member, (uint64_t)st.st_size, st.st_mtime);
	/* The header promised st_size bytes: a file that shrinks meanwhile is
	 * padded with zeros, one that grows is cut, so the archive stays whole. */
	char buf[1 << 16];
	uint64_t left = (uint64_t)st.st_size;
	while (left > 0 && !t->error) {
		ssize_t got = read(fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			memset(buf, 0, sizeof(buf));
			got = (ssize_t)(left < sizeof(buf) ? left : sizeof(buf));
			snprintf(why, why_len, "changed while it was read: padded");
		}
		put(t, buf, (size_t)got);
		left -= (uint64_t)got;
	}
	pad(t, (uint64_t)st.st_size);
	close(fd);
	return t->error ? -1 : 0;
}

int tar_finish(struct tar_writer *t)
{
	static const char zeros[2 * BLOCK];
	put(t, zeros, sizeof(zeros));
	if (!t->error && fflush(t->out) != 0)
		t->error = errno ? errno : EIO;
	return t->error ? -1 : 0;
}
