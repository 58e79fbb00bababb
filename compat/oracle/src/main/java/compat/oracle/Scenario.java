package compat.oracle;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code static void snake_case_name(Golden g)} method as a scenario. The method name
 * is the scenario name and the golden file name ({@code <name>.json}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface Scenario {
}
