/*
 * Text that came from a file, made safe to show. Tensor, layer, plugin and
 * field names in a plan or a model are chosen by whoever wrote the file; put
 * on a terminal as they are, bytes like ESC would let that file move the
 * cursor, retitle the window or hide what the program printed. Every name
 * the program prints as text goes through cli_escape; JSON output has its
 * own escaping (json.c), with the same idea of valid UTF-8.
 */
#ifndef PLUGRT_TOOLS_TEXT_H
#define PLUGRT_TOOLS_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), with its code
 * point in *cp; 0 if the bytes there are not UTF-8 (overlong forms,
 * surrogates and values past U+10FFFF included). */
size_t cli_utf8_next(const unsigned char *s, size_t n, unsigned *cp);

/* 1 for U+0000..U+001F, U+007F and the C1 controls U+0080..U+009F, which
 * terminals act on (U+009B is CSI, like ESC [). */
int cli_is_control(unsigned cp);

/* Room for an escaped name in a message; a longer one is cut ("..."). */
#define CLI_ESC_CAP 320

/* `s` as printable text: control characters, invalid UTF-8 bytes and
 * backslash become \xHH (\\ for a backslash), so the reader sees every byte
 * and the text cannot act on the terminal. Returns s itself when nothing
 * needs escaping (then of any length), else buf, cut to cap bytes with a
 * final "..." when it does not fit. NULL gives "(null)". */
const char *cli_escape(const char *s, char *buf, size_t cap);

#endif /* PLUGRT_TOOLS_TEXT_H */
