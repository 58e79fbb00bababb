package compat.connect;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Marks a static method of {@link Scenarios} that returns a configured {@link Connector}. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface Scenario {}
