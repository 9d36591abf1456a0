/* File names built from parts. */
#ifndef DLB_CORE_PATH_H
#define DLB_CORE_PATH_H

/* "dir/name", malloc'ed; NULL when out of memory. */
char *dlb_path_join(const char *dir, const char *name);

#endif
