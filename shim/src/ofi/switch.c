/* The registry of objects whose hot tables switch between the provider's and
 * ours (layer.h): every switch happens under one lock, against the knobs in
 * force at that moment, so a knob change racing with an object's own
 * switch-back or its close always ends with the table the knobs call for. */
#include <pthread.h>

#include "layer.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static switch_node registry = {&registry, &registry, NULL};
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

static void knobs_changed(void)
{
    switch_all();
}

static void watch_knobs(void)
{
    loggp_live_on_change(knobs_changed);
}

void switch_register(switch_node *node)
{
    pthread_once(&watch_once, watch_knobs);
    pthread_mutex_lock(&registry_lock);
    node->next = registry.next;
    node->prev = &registry;
    registry.next->prev = node;
    registry.next = node;
    node->apply(node, loggp_live_active());
    pthread_mutex_unlock(&registry_lock);
}

void switch_unregister(switch_node *node)
{
    pthread_mutex_lock(&registry_lock);
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->next = node->prev = node;
    pthread_mutex_unlock(&registry_lock);
}

void switch_all(void)
{
    pthread_mutex_lock(&registry_lock);
    int armed = loggp_live_active();
    for (switch_node *n = registry.next; n != &registry; n = n->next)
        n->apply(n, armed);
    pthread_mutex_unlock(&registry_lock);
}

void switch_refresh(switch_node *node)
{
    pthread_mutex_lock(&registry_lock);
    if (node->next != node) /* still registered */
        node->apply(node, loggp_live_active());
    pthread_mutex_unlock(&registry_lock);
}
