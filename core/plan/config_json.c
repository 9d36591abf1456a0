#include "plan/config_json.h"

json_t *dlb_value_to_json(const struct dlb_param_def *def, const struct dlb_value *v)
{
    switch (def->type) {
    case DLB_PARAM_INT:
    case DLB_PARAM_SIZE:
        return json_integer((json_int_t)v->i);
    case DLB_PARAM_BOOL:
        return json_boolean(v->i);
    case DLB_PARAM_FLOAT:
    case DLB_PARAM_TIME:
        return json_real(v->f);
    case DLB_PARAM_ENUM:
    case DLB_PARAM_STRING:
        return json_string(v->s ? v->s : "");
    }
    return json_null();
}

json_t *dlb_config_to_json(const struct dlb_plan *p, const struct dlb_config *c)
{
    const struct dlb_suite *s = p->suite;
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (unsigned k = 0; k < s->n_ns; k++) {
        for (unsigned i = 0; i < s->ns[k].n; i++) {
            char key[256];
            dlb_suite_key_name(s, (struct dlb_keyref){k, i}, key, sizeof key);
            json_object_set_new(o, key, dlb_value_to_json(&s->ns[k].defs[i],
                                                          &c->values[k][i]));
        }
    }
    return o;
}
