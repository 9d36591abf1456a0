/* The parts of h->model_api (ABI 2.0) that live outside host_model.c,
 * where the table is: slices (host_slice.c), rewrite and the extras
 * (host_rewrite.c). Each is the table entry of the same name. */
#ifndef DLB_CORE_HOST_API_H
#define DLB_CORE_HOST_API_H

#include <dlbench/model_api.h>

extern const struct dlb_model_api dlb_host_model_api;

/* Log "WHAT: a NULL model or argument" and return DLB_ERR_INTERNAL. */
dlb_status dlb_host_null(const struct dlb_host *h, const char *what);

dlb_status dlb_host_act_count(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned i,
                              size_t *count);
dlb_status dlb_host_slice(const struct dlb_host *h, struct dlb_model *m,
                          const struct dlb_stage_spec *spec,
                          struct dlb_stage **out);
void dlb_host_slice_close(const struct dlb_host *h, struct dlb_stage *st);
dlb_status dlb_host_slice_begin(const struct dlb_host *h, struct dlb_stage *st,
                                uint32_t n, uint32_t *lo);
dlb_status dlb_host_slice_forward(const struct dlb_host *h,
                                  struct dlb_stage *st, unsigned k,
                                  const float *in, const int32_t *labels,
                                  float *out, double *loss);
dlb_status dlb_host_slice_backward(const struct dlb_host *h,
                                   struct dlb_stage *st, unsigned k,
                                   const float *dout, float *din);
dlb_status dlb_host_slice_step(const struct dlb_host *h, struct dlb_stage *st);
void dlb_host_slice_memory(const struct dlb_host *h,
                           const struct dlb_stage *st,
                           struct dlb_stage_memory *out);
dlb_status dlb_host_slice_input(const struct dlb_host *h, struct dlb_stage *st,
                                unsigned k, enum dlb_stage_input which,
                                struct dlb_act_view *out);
dlb_status dlb_host_slice_forward_view(const struct dlb_host *h,
                                       struct dlb_stage *st, unsigned k,
                                       const float *in, const int32_t *labels,
                                       struct dlb_act_view *out, double *loss);
dlb_status dlb_host_slice_backward_view(const struct dlb_host *h,
                                        struct dlb_stage *st, unsigned k,
                                        struct dlb_act_view *din);

dlb_status dlb_host_rewrite(const struct dlb_host *h, struct dlb_model *m,
                            const struct dlb_rewrite *rw, unsigned n,
                            void *result);
dlb_extra_fn dlb_host_extra(const struct dlb_host *h, const char *name);

#endif
