#include <stdarg.h>
#include <stdio.h>

#include "agora_err.h"

void agora_err_set(agora_err_t *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
}
